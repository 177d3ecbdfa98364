// Package password is the "password" hook: it makes sure a database's
// credentials Secret exists, generating one with a random password when the
// user did not provide it, and hands the chart the Secret's name — never its
// content. It never modifies a Secret that exists.
// It must never import Helm or package helm, nor the reconcile, manager, cli,
// admission or preview packages.
package password
