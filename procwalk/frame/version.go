//go:build linux

package frame

// WireVersion is the version of the encoding Encoder writes and Decoder
// reads (the first byte of every encoded frame). A recording states it,
// so that a procwalk whose codec changed says so instead of misreading
// the file: change it with every change of the encoding.
const WireVersion = wireVersion
