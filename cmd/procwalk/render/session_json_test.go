//go:build linux

package render

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
)

// One session's document: the visibility and notes of the snapshot, the
// session, and each member still in the snapshot as a process.
func TestWriteJSONSession(t *testing.T) {
	fs, err := procwalk.NewFS("../../../procwalk/testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	snap, err := fs.Snapshot(procwalk.FieldCmdline)
	if err != nil {
		t.Fatal(err)
	}
	s := &session.Session{Kind: "tree", Name: "x", Members: []procwalk.ProcID{snap.Process(102).ID, {PID: 99999}}}
	var b bytes.Buffer
	if err := WriteJSONSession(&b, snap, []string{"a note"}, s, nil); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Notes   []string `json:"notes"`
		Session struct {
			Kind      string `json:"kind"`
			Name      string `json:"name"`
			Processes []struct {
				PID int `json:"pid"`
			} `json:"processes"`
		} `json:"session"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, b.String())
	}
	if len(doc.Notes) != 1 || doc.Session.Kind != "tree" || doc.Session.Name != "x" || len(doc.Session.Processes) != 1 || doc.Session.Processes[0].PID != 102 {
		t.Errorf("document %+v:\n%s", doc, b.String())
	}
}
