package textwidth_test

import (
	"fmt"

	"github.com/procwalk/procwalk/procwalk/textwidth"
)

func Example() {
	for _, name := range []string{"bash", "日本語のエージェント", "naïve"} {
		fmt.Printf("[%s] %d\n", textwidth.PadRight(textwidth.Cut(name, 12), 12), textwidth.Width(name))
	}
	// Output:
	// [bash        ] 4
	// [日本語のエ… ] 20
	// [naïve       ] 5
}
