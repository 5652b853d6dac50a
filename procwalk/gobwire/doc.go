// Package gobwire writes and reads encoding/gob's wire format for the
// values procwalk passes between its own processes (a script worker's
// messages) and keeps in recordings (a frame's sessions and host figures),
// without importing encoding/gob.
//
// Why not encoding/gob itself: its package initialisation registers its
// types at every start of every program that links it, about 0.15 ms of
// CPU, a seventh of what `procwalk --version` may cost beside an empty Go
// program (issue 21's speed table). And why the gob format: the frames of
// recordings made before keep it, and must keep reading.
//
// What it covers is what those values hold: booleans, integers, floats,
// strings, byte slices, structs (exported fields, an embedded struct as
// a field named after its type), pointers, slices, arrays, maps, values
// with a GobEncode or MarshalBinary method (time.Time), and interface
// values holding a bool, number or string. Chan and func fields are left
// out, as gob leaves them. An Encoder sends each type's description once,
// before the first value of that type; a Decoder reads the values of one
// stream, from its start, and matches a struct's fields by name, passing
// over those the target lacks. TestGobReadsOurs and TestWeReadGob check
// both directions against encoding/gob itself.
package gobwire
