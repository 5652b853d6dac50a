module github.com/procwalk/procwalk

go 1.26.0

require (
	github.com/influxdata/line-protocol/v2 v2.2.1
	github.com/peterbourgon/ff/v3 v3.4.0
	github.com/yuin/gopher-lua v1.1.2
	golang.org/x/sys v0.49.0
)
