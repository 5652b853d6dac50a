package plugin

import _ "embed"

// sampleConfig is the commented [[inputs.procwalk]] section, the same on
// every system (see input_other.go).
//
//go:embed sample.conf
var sampleConfig string
