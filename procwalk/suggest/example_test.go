package suggest_test

import (
	"fmt"

	"github.com/procwalk/procwalk/procwalk/suggest"
)

func Example() {
	sessions := []string{"build", "default/web", "srv2/web", "monitoring"}
	fmt.Println(suggest.Closest("buidl", sessions, 3))
	fmt.Println(suggest.Closest("web", sessions, 3))
	// Output:
	// [build]
	// [default/web srv2/web]
}
