package scripts_test

import (
	"fmt"

	"github.com/procwalk/procwalk/scripts"
)

func ExampleLookup() {
	s, ok := scripts.Lookup("zombies")
	fmt.Println(ok, s.Name+":", s.Description)
	// Output:
	// true zombies: zombie processes and the parents that do not reap them, per session
}
