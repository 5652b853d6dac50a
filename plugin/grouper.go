package plugin

import "github.com/procwalk/procwalk/procwalk"

// sessionGrouper is what a Collector needs of a *procwalk.Grouper.
type sessionGrouper interface {
	procwalk.Stage
	Fields() procwalk.Fields
	Group(s *procwalk.Snapshot) (sessions []procwalk.Session, notes []string)
}

func newGrouper(fs procwalk.FS, cfg procwalk.GroupConfig) (sessionGrouper, error) {
	return procwalk.NewGrouper(fs, cfg)
}
