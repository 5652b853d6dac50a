//go:build linux

package plugin_test

import (
	"bytes"
	"fmt"
	"log"
	"strings"

	"github.com/procwalk/procwalk/plugin"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
)

// A Collector over a fixture /proc: user sessions and the top process of
// each, as `procwalk telegraf --session-kinds user --process-top 1` writes
// them. The example prints each line's measurement and tags only: fields
// and timestamps follow them.
func Example() {
	fs, err := procwalk.NewFS("testdata/proc")
	if err != nil {
		log.Fatal(err)
	}
	users, err := procwalk.ReadUsers("testdata/passwd")
	if err != nil {
		log.Fatal(err)
	}
	c, err := plugin.NewCollector(fs, plugin.Config{
		Group:     session.Config{Kinds: []string{session.KindUser}},
		Processes: plugin.ProcessConfig{Top: 1},
		Users:     users,
	})
	if err != nil {
		log.Fatal(err)
	}
	var out bytes.Buffer
	if err := c.WriteBatch(&out, nil); err != nil {
		log.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		head, _, _ := strings.Cut(line, " ")
		fmt.Println(head)
	}
	// Output:
	// procwalk_session,kind=user,session=alice,user=alice
	// procwalk_session,kind=user,session=root,user=root
	// procwalk_process,by=rss_bytes,kind=user,rank=1,session=alice
	// procwalk_process,by=rss_bytes,kind=user,rank=1,session=root
	// procwalk,schema=procwalk
}
