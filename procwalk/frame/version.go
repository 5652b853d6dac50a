//go:build linux

package frame

// WireVersion is the version of the encoding Encoder writes (the first
// byte of every encoded frame); a Decoder reads every version from
// OldestWireVersion to WireVersion. A recording states it, so that a
// procwalk whose codec changed says so instead of misreading the file:
// change it with every change of the encoding, and keep a reader of the
// old one (codec_v1.go) while recordings of it may exist.
const (
	WireVersion       = wireVersion
	OldestWireVersion = oldestWireVersion
)
