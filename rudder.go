// Package rudder holds what the manager binary embeds: watches.yaml and the
// charts it names. It lives at the module root because //go:embed cannot
// reach files outside its own directory.
package rudder

import "embed"

// Files holds watches.yaml and every chart under charts/. The "all:" prefix
// keeps files starting with "_" or ".", such as _helpers.tpl and .helmignore.
//
//go:embed watches.yaml all:charts
var Files embed.FS

// WatchesFile is the name of the watches file inside Files.
const WatchesFile = "watches.yaml"
