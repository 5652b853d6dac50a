//go:build linux

package session

import (
	"strings"

	"github.com/procwalk/procwalk/procwalk"
)

// cgroup_path.go reads meaning out of cgroup paths: systemd units and
// slices, Kubernetes pods and containers, plain paths.
//
// Kubernetes pods, by cgroup driver:
//   systemd:  /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid with _>.slice/cri-containerd-<id>.scope
//             /kubepods.slice/kubepods-pod<uid>.slice/...                  (guaranteed: no QoS slice)
//             .../kubepods-besteffort-pod<uid>.slice:cri-containerd:<id>   (containerd's systemd form)
//   cgroupfs: /kubepods/burstable/pod<uid>/<id>, /kubepods/pod<uid>/<id>
// Pod uids use '-' in the API and '_' in systemd unit names; we report '-'.

// cgroupPlace is what a cgroup path says about the session it belongs to.
type cgroupPlace struct {
	dir         string // the session's cgroup directory: pod, unit, or the whole path
	name        string // session name: "pod/<uid>", the unit, or the path
	unit        string
	slice       string
	podUID      string
	containerID string
	qos         string
}

// placeCgroup finds the session a cgroup path belongs to: its Kubernetes pod,
// else its innermost systemd unit, else the path itself. A cgroup procwalk
// made for its own processes (a script worker's, a test's) is never a
// session: the path is cut before it (procwalk.OwnCgroupParent), so those
// processes count in the cgroup around it, and the procwalk-worker-<pid>
// names, new with every procwalk, make no series of their own.
func placeCgroup(path string) cgroupPlace {
	if path == "" {
		path = "/"
	}
	path = procwalk.OwnCgroupParent(path)
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i, part := range parts {
		uid, ok := podUID(part)
		if !ok {
			continue
		}
		// containerd's systemd form names pod and container in one
		// element, "...pod<uid>.slice:cri-containerd:<id>": the pod is the
		// part before ':', so that its containers make one session.
		podPart, container, colon := strings.Cut(part, ":")
		pl := cgroupPlace{
			dir:    "/" + strings.Join(append(parts[:i:i], podPart), "/"),
			name:   "pod/" + uid,
			podUID: uid,
			qos:    podQoS(parts[:i+1]),
		}
		switch {
		case colon:
			pl.containerID = containerID(container)
		case i+1 < len(parts):
			pl.containerID = containerID(parts[i+1])
		}
		return pl
	}
	for i := len(parts) - 1; i >= 0; i-- {
		if strings.HasSuffix(parts[i], ".service") || strings.HasSuffix(parts[i], ".scope") {
			pl := cgroupPlace{dir: "/" + strings.Join(parts[:i+1], "/"), name: parts[i], unit: parts[i]}
			for j := i - 1; j >= 0; j-- {
				if strings.HasSuffix(parts[j], ".slice") {
					pl.slice = parts[j]
					break
				}
			}
			if strings.HasPrefix(parts[i], "docker-") {
				pl.containerID = containerID(parts[i])
			}
			return pl
		}
	}
	pl := cgroupPlace{dir: path, name: path}
	if len(parts) >= 2 && parts[len(parts)-2] == "docker" {
		pl.containerID = containerID(parts[len(parts)-1]) // docker's cgroupfs driver: /docker/<id>
	}
	return pl
}

// podUID finds "pod<uid>" in one path element and returns the uid with '-'.
func podUID(part string) (string, bool) {
	i := strings.Index(part, "pod")
	for i >= 0 {
		rest := part[i+3:]
		n := 0
		for n < len(rest) && (isHex(rest[n]) || rest[n] == '-' || rest[n] == '_') {
			n++
		}
		uid := strings.ReplaceAll(rest[:n], "_", "-")
		if looksLikeUID(uid) {
			return uid, true
		}
		j := strings.Index(rest, "pod")
		if j < 0 {
			break
		}
		i += 3 + j
	}
	return "", false
}

// looksLikeUID accepts an RFC 4122 uid (8-4-4-4-12 hex) and the 32-hex uid
// the kubelet gives static pods.
func looksLikeUID(s string) bool {
	switch len(s) {
	case 36:
		for i := 0; i < len(s); i++ {
			if i == 8 || i == 13 || i == 18 || i == 23 {
				if s[i] != '-' {
					return false
				}
			} else if !isHex(s[i]) {
				return false
			}
		}
		return true
	case 32:
		for i := 0; i < len(s); i++ {
			if !isHex(s[i]) {
				return false
			}
		}
		return true
	}
	return false
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// podQoS reads the QoS class from the elements above and at the pod.
func podQoS(parts []string) string {
	for _, p := range parts {
		switch {
		case p == "burstable" || strings.HasPrefix(p, "kubepods-burstable"):
			return "burstable"
		case p == "besteffort" || strings.HasPrefix(p, "kubepods-besteffort"):
			return "besteffort"
		}
	}
	return "guaranteed" // the kubelet puts guaranteed pods straight under kubepods
}

// containerID takes the trailing hex id of a container element:
// "cri-containerd-<id>.scope", "docker-<id>.scope", "crio-<id>.scope",
// "cri-containerd:<id>", or a bare "<id>". "" when there is none.
func containerID(part string) string {
	part = strings.TrimSuffix(part, ".scope")
	if i := strings.LastIndexAny(part, "-:"); i >= 0 {
		part = part[i+1:]
	}
	// Container runtimes use 64 hex digits; accept 12 and more (short ids).
	if len(part) < 12 {
		return ""
	}
	for i := 0; i < len(part); i++ {
		if !isHex(part[i]) {
			return ""
		}
	}
	return part
}
