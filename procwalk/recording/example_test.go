//go:build linux

package recording_test

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/recording"
)

// Record three frames of the test fixture's /proc and read them back.
func Example() {
	fs, err := procwalk.NewFS("../testdata/proc")
	if err != nil {
		panic(err)
	}
	p := frame.New(fs, frame.Config{Fields: procwalk.AllFields, Clock: procwalk.NewOffsetClock(time.Unix(1800000000, 0))})
	var file bytes.Buffer
	w, err := recording.NewWriter(&file, recording.Header{Procwalk: "procwalk example", IntervalSeconds: 10}, recording.Options{Anonymize: true})
	if err != nil {
		panic(err)
	}
	for range 3 {
		f, err := p.Gather()
		if err != nil {
			panic(err)
		}
		if err := w.Write(f); err != nil {
			panic(err)
		}
	}

	r, err := recording.NewReader(bytes.NewReader(file.Bytes()), "example.pwrec")
	if err != nil {
		panic(err)
	}
	fmt.Println("anonymized:", r.Header().Anonymized, "interval:", r.Header().Interval())
	for {
		f, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		fmt.Println(len(f.Snapshot.Procs), "processes; pid 1 is", len(f.Snapshot.Process(1).Comm), "characters long")
	}
	// Output:
	// anonymized: true interval: 10s
	// 18 processes; pid 1 is 11 characters long
	// 18 processes; pid 1 is 11 characters long
	// 18 processes; pid 1 is 11 characters long
}
