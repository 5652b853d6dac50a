//go:build linux

package plugin

import (
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
)

// sessionGrouper is what a Collector needs of a *session.Grouper.
type sessionGrouper interface {
	procwalk.Stage
	Fields() procwalk.Fields
	Group(s *procwalk.Snapshot) (sessions []session.Session, notes []string)
}

func newGrouper(fs procwalk.FS, cfg session.Config) (sessionGrouper, error) {
	return session.NewGrouper(fs, cfg)
}
