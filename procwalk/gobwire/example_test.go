//go:build linux

package gobwire_test

import (
	"bytes"
	"fmt"

	"github.com/procwalk/procwalk/procwalk/gobwire"
)

// Two values on one stream: the type's description goes once, before the
// first.
func Example() {
	type point struct {
		X, Y int
		Name string
	}
	var stream bytes.Buffer
	enc := gobwire.NewEncoder(&stream)
	enc.Encode(point{X: 1, Y: -2, Name: "a"})
	enc.Encode(point{X: 3})

	dec := gobwire.NewDecoder(&stream)
	for range 2 {
		var p point
		if err := dec.Decode(&p); err != nil {
			fmt.Println(err)
		}
		fmt.Printf("%+v\n", p)
	}
	// Output:
	// {X:1 Y:-2 Name:a}
	// {X:3 Y:0 Name:}
}
