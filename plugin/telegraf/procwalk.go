// Package procwalkinput registers procwalk as Telegraf's inputs.procwalk.
//
// It is a module of its own so that procwalk's main module does not inherit
// Telegraf's dependency graph. Import it for its side effect from a Telegraf
// build (see README.md):
//
//	import _ "github.com/procwalk/procwalk/plugin/telegraf"
package procwalkinput

import (
	"github.com/influxdata/telegraf"
	"github.com/influxdata/telegraf/plugins/inputs"

	"github.com/procwalk/procwalk/plugin"
)

// Procwalk is the Telegraf input: plugin.Input's options (its TOML fields
// are promoted from the embedded struct) plus the logger Telegraf injects
// into a field named Log of type telegraf.Logger.
type Procwalk struct {
	plugin.Input
	Log telegraf.Logger `toml:"-"`
}

// Init hands Telegraf's logger to the input and validates the options.
func (p *Procwalk) Init() error {
	if p.Log != nil {
		p.Input.Log = p.Log
	}
	return p.Input.Init()
}

// Gather gathers once into Telegraf's accumulator.
func (p *Procwalk) Gather(acc telegraf.Accumulator) error {
	return p.Input.Gather(acc)
}

// Compile-time proof that Telegraf's types fit the interfaces procwalk
// declares: plugin.Accumulator's method set is telegraf.Accumulator's.
var (
	_ plugin.Accumulator   = telegraf.Accumulator(nil)
	_ plugin.Logger        = telegraf.Logger(nil)
	_ telegraf.Input       = (*Procwalk)(nil)
	_ telegraf.Initializer = (*Procwalk)(nil)
)

// init is procwalk's one init(): Telegraf finds inputs only through this
// registry.
func init() {
	inputs.Add("procwalk", func() telegraf.Input { return &Procwalk{} })
}
