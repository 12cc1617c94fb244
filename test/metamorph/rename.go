package metamorph

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// suffixAlphabet is the alphabet of the random suffixes the API server appends to a
// generateName (k8s.io/apimachinery/pkg/util/rand: no vowels, no confusable digits).
const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// Rename returns a copy of s in which every copy whose name was generated (a controller's
// pod: generateName plus a random suffix) has another suffix and another UID, and every
// reference to it follows: events about it (involved object, name, and the name or UID in any
// event's message), the copies' own status messages, EndpointSlice target references, log
// tails and the lines that name it, and the metric series' raw answers. A StatefulSet's copies keep their names, which are
// their identities. The map returned gives each old name its new one.
func Rename(s *snapshot.Snapshot) (*snapshot.Snapshot, map[string]string, error) {
	c := Clone(s)
	names := map[string]string{}
	uids := map[types.UID]types.UID{}
	taken := map[string]bool{}
	for _, p := range c.Pods {
		taken[p.Namespace+"/"+p.Name] = true
	}
	for _, p := range c.Pods {
		if p.GenerateName == "" || !strings.HasPrefix(p.Name, p.GenerateName) || len(p.Name) == len(p.GenerateName) {
			continue
		}
		n := len(p.Name) - len(p.GenerateName)
		var name string
		for salt := 0; ; salt++ {
			name = p.GenerateName + suffix(p.Name, salt, n)
			if !taken[p.Namespace+"/"+name] {
				break
			}
		}
		taken[p.Namespace+"/"+name] = true
		names[p.Name] = name
		uid := types.UID(fmt.Sprintf("0e7a5f1c-%04x-4d1a-9b2c-%012x", hash(string(p.UID), 1)&0xffff, hash(string(p.UID), 2)&0xffffffffffff))
		uids[p.UID] = uid
		p.Name, p.UID = name, uid
	}
	if len(names) == 0 {
		return nil, nil, notApplicable("no copy has a generated name")
	}
	// Longer names first, so a name that begins another is not replaced inside it.
	old := make([]string, 0, len(names))
	for k := range names {
		old = append(old, k)
	}
	sort.Slice(old, func(i, j int) bool { return len(old[i]) > len(old[j]) })
	pairs := make([]string, 0, 2*len(old)+2*len(uids))
	for _, k := range old {
		pairs = append(pairs, k, names[k])
	}
	// The kubelet writes a copy's UID beside its name ("pod=web-x_ns(uid)").
	for o, n := range uids {
		pairs = append(pairs, string(o), string(n))
	}
	repl := strings.NewReplacer(pairs...)

	for _, p := range c.Pods {
		p.Status.Message = repl.Replace(p.Status.Message)
		for i := range p.Status.Conditions {
			p.Status.Conditions[i].Message = repl.Replace(p.Status.Conditions[i].Message)
		}
		for _, cs := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses, p.Status.EphemeralContainerStatuses} {
			for i := range cs {
				for _, st := range []*corev1.ContainerState{&cs[i].State, &cs[i].LastTerminationState} {
					if st.Waiting != nil {
						st.Waiting.Message = repl.Replace(st.Waiting.Message)
					}
					if st.Terminated != nil {
						st.Terminated.Message = repl.Replace(st.Terminated.Message)
					}
				}
			}
		}
	}

	for _, e := range c.Events {
		if e.InvolvedObject.Kind == "Pod" {
			if n, ok := names[e.InvolvedObject.Name]; ok {
				e.InvolvedObject.Name = n
			}
			if u, ok := uids[e.InvolvedObject.UID]; ok {
				e.InvolvedObject.UID = u
			}
		}
		if e.Related != nil && e.Related.Kind == "Pod" {
			if n, ok := names[e.Related.Name]; ok {
				e.Related.Name = n
			}
			if u, ok := uids[e.Related.UID]; ok {
				e.Related.UID = u
			}
		}
		e.Name = repl.Replace(e.Name)
		e.Message = repl.Replace(e.Message)
	}
	for _, es := range c.EndpointSlices {
		for i := range es.Endpoints {
			r := es.Endpoints[i].TargetRef
			if r == nil || r.Kind != "Pod" {
				continue
			}
			if n, ok := names[r.Name]; ok {
				r.Name = n
			}
			if u, ok := uids[r.UID]; ok {
				r.UID = u
			}
		}
	}
	for i := range c.Logs {
		l := &c.Logs[i]
		if n, ok := names[l.Pod]; ok {
			l.Pod = n
		}
		for j := range l.Lines {
			l.Lines[j] = repl.Replace(l.Lines[j])
		}
	}
	if c.Metrics != nil {
		for i := range c.Metrics.Series {
			m := &c.Metrics.Series[i]
			m.Result = []byte(repl.Replace(string(m.Result)))
			m.Query = repl.Replace(m.Query)
		}
	}
	return c, names, nil
}

func hash(s string, salt int) uint64 {
	h := fnv.New64a()
	_, _ = fmt.Fprintf(h, "%d/%s", salt, s) // a hash takes every write
	return h.Sum64()
}

// suffix is a stable n-letter suffix for name, from the API server's alphabet.
func suffix(name string, salt, n int) string {
	h := hash(name, salt+100)
	b := make([]byte, n)
	for i := range b {
		b[i] = suffixAlphabet[h%uint64(len(suffixAlphabet))]
		h = h/uint64(len(suffixAlphabet)) + uint64(i)*2654435761
	}
	return string(b)
}
