package rollout

import _ "embed"

// CRD is the ChartRollout CustomResourceDefinition, as `rudder manifests`
// writes it next to the kinds' CRDs.
//
//go:embed chartrollout.crd.yaml
var CRD []byte

// CRDFile is the name `rudder manifests` gives CRD.
const CRDFile = "rudder.dev_chartrollouts.yaml"
