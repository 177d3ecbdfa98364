package bundle

// Package is the bundle's OLM package name, and the CSV's name before its version.
const Package = "rudder"

// Channel is the one channel the bundle is published in, and the package's default channel.
const Channel = "stable"

// Options say where the bundle's sources are and which release it describes.
type Options struct {
	// ConfigDir holds the kustomize bases: default/ (CRDs, RBAC and the manager Deployment, found through each
	// kustomization.yaml's resources) and samples/ (one custom resource per kind). Default "config".
	ConfigDir string
	// Readme is the Markdown file whose opening, the text before its first "## " heading, describes the
	// operator in the CSV. Default "README.md".
	Readme string
	// Version is the semantic version of the release: the CSV's spec.version and its name rudder.v<Version>.
	// Default "0.1.0".
	Version string
	// Image is the manager's container image, set in the CSV's Deployment and its containerImage annotation.
	// Default "rudder:latest", the image config/manager deploys.
	Image string
}

// WithDefaults returns o with every empty field set to its default.
func (o Options) WithDefaults() Options {
	if o.ConfigDir == "" {
		o.ConfigDir = "config"
	}
	if o.Readme == "" {
		o.Readme = "README.md"
	}
	if o.Version == "" {
		o.Version = "0.1.0"
	}
	if o.Image == "" {
		o.Image = "rudder:latest"
	}
	return o
}
