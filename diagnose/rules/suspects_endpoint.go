package rules

import (
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
)

// RuleEndpointOfFailedConnection is the endpoint rule's ID; IDs are stable: scripts and the
// documentation refer to them.
const RuleEndpointOfFailedConnection RuleID = "endpoint-of-failed-connection"

// endpointFamily is for a connection that fails without naming where it went: a JDBC driver's
// "Communications link failure ... Connection refused", a pool that "could not obtain a
// connection". The general rule needs the failure to name a host or port; here the fields that
// hold an endpoint are the suspects, by how well they fit the failure: a field whose scheme or
// product the failure's words name (a jdbc:mysql URL for com.mysql.cj's exception) first. A
// variable whose value comes from a Secret or ConfigMap is named by its reference: its value is
// never read.
var _ = register(family{
	order:  135,
	name:   "endpoint",
	detect: (*ranker).endpointOfFailedConnection,
	rules: []RuleInfo{
		{
			RuleEndpointOfFailedConnection, "A connection fails without naming where it went; this field holds the endpoint it most likely dials",
			"failures of the connection class (refused, timed out, link failure) that name no host or port, and the template's endpoint-like values and variable names",
			"Check the endpoint against the dependency it should reach (host, port, scheme); if it is right, the dependency is down.", true,
		},
	},
})

// endpointName matches a variable whose name says it holds an endpoint.
var endpointName = regexp.MustCompile(`(?i)(^|_)(URL|URI|HOST|HOSTNAME|ADDR|ADDRESS|ENDPOINT|DSN|SERVER|SERVERS|BROKER|BROKERS|PORT)$`)

// EndpointVariable reports whether a variable's name says it holds an endpoint.
func EndpointVariable(name string) bool { return endpointName.MatchString(name) }

// SameServer reports whether failures (lower-case) name a kind of server (MySQL, Redis...)
// that an endpoint's words (lower-case: its variable's name and value) fit.
func SameServer(failures, endpoint string) bool {
	for _, pr := range endpointProducts {
		if containsAny(failures, pr.failure) && containsAny(endpoint, pr.endpoint) {
			return true
		}
	}
	return false
}

// endpointProducts are the words a failure may use for the kind of server it dialled, with the
// schemes and words of an endpoint that fit them.
var endpointProducts = []struct{ failure, endpoint []string }{
	{[]string{"mysql", "mariadb"}, []string{"mysql", "mariadb", "3306"}},
	{[]string{"postgres", "psql", "psycopg", "pgx", "pq:"}, []string{"postgres", "postgresql", "5432"}},
	{[]string{"redis"}, []string{"redis", "6379"}},
	{[]string{"amqp", "rabbit"}, []string{"amqp", "rabbit", "5672"}},
	{[]string{"mongo"}, []string{"mongodb", "mongo", "27017"}},
	{[]string{"kafka"}, []string{"kafka", "9092"}},
	{[]string{"elasticsearch", "opensearch"}, []string{"elastic", "opensearch", "9200"}},
}

// endpointOfFailedConnection names the fields holding endpoints when the workload's failures
// are connection failures and none of them names a host or port the general rule matched.
func (r *ranker) endpointOfFailedConnection() {
	if r.recorded(RuleNamedInFailure) || r.recorded(RuleRejectedArgument) {
		// A failure named the endpoint: the general rule has it.
		return
	}
	var cands []endpointCandidate
	spec := &r.in.Template.Spec
	for ci := range spec.Containers {
		c := &spec.Containers[ci]
		base := r.specPath.Child("containers").Index(ci)
		// The endpoint values that take a part from another variable ($(DB_HOST) in
		// jdbc:mysql://$(DB_HOST):3306/db), by that variable's name.
		via := map[string]string{}
		for ei := range c.Env {
			if e := &c.Env[ei]; e.ValueFrom == nil && endpointValue(e.Value) {
				for _, name := range referencedVars(e.Value) {
					via[name] = e.Name + "=" + e.Value
				}
			}
		}
		for ei := range c.Env {
			e := &c.Env[ei]
			p := base.Child("env").Index(ei)
			switch {
			case e.ValueFrom == nil && endpointValue(e.Value):
				cands = append(cands, endpointCandidate{path: p.Child("value"), variable: e.Name, value: e.Value})
			case e.ValueFrom != nil && (endpointName.MatchString(e.Name) || via[e.Name] != ""):
				if ref, path := valueRef(e.ValueFrom, p.Child("valueFrom")); path != nil {
					cands = append(cands, endpointCandidate{path: path, variable: e.Name, value: ref, via: via[e.Name]})
				}
			}
		}
		for ai, a := range c.Args {
			if endpointValue(a) {
				cands = append(cands, endpointCandidate{path: base.Child("args").Index(ai), value: a})
			}
		}
	}
	if len(cands) == 0 {
		// No variable or argument holds an endpoint: the program read it from a file, and a
		// ConfigMap or Secret mounted into it is where a file of the spec comes from.
		cands = r.mountedConfig()
	}
	if len(cands) == 0 {
		return
	}
	var sigs []*Signal
	// The kinds of server the failures name, each distinct text read once.
	named := make([]bool, len(endpointProducts))
	seen := map[string]bool{}
	for _, s := range r.in.Signals {
		if s.Explained || s.Class() != facts.ClassConnection {
			continue
		}
		sigs = append(sigs, s)
		if seen[s.Text] {
			continue
		}
		seen[s.Text] = true
		lower := strings.ToLower(s.Text)
		for k, pr := range endpointProducts {
			named[k] = named[k] || containsAny(lower, pr.failure)
		}
	}
	if len(sigs) == 0 {
		return
	}
	for _, c := range cands {
		r.endpointSuspect(sigs, c, named)
	}
}

// endpointCandidate is a field that may hold the endpoint a failed connection dialled.
type endpointCandidate struct {
	path *field.Path
	// variable is the env var's name, "" for an argument or a volume; value its value, or what
	// a reference names (its data is never read).
	variable, value string
	// via is the endpoint value (NAME=value) that takes a part from this variable.
	via string
	// volume says the candidate is a mounted ConfigMap or Secret, not a variable.
	volume bool
}

// endpointSuspect records one field holding an endpoint; named says which of endpointProducts
// the failures name.
func (r *ranker) endpointSuspect(sigs []*Signal, c endpointCandidate, named []bool) {
	score := scorePossible
	what := "holds an endpoint"
	switch {
	case c.volume:
		what = "mounts " + c.value + ", the only configuration of the spec that can hold the endpoint (its data is not read)"
	case c.variable != "":
		what = "sets " + c.variable
	}
	lv := strings.ToLower(c.variable + " " + c.value + " " + c.via)
	for k, pr := range endpointProducts {
		if named[k] && containsAny(lv, pr.endpoint) {
			score, what = scoreLikely, what+", the kind of server the failure names"
			break
		}
	}
	if c.via != "" {
		// The endpoint value is written in the spec around this variable; the part that
		// varies from one environment to the next is the one it takes from here.
		score += 5
		what += ", which " + Clip(c.via, 80) + " takes its address from"
	}
	reason := "a connection fails without naming where it went" + r.copiesOf(sigs) + ": " + Clip(sigs[0].Text, 160) + "; this field " + what
	r.readAll(sigs)
	r.suspectTemplate(RuleEndpointOfFailedConnection, c.path, score, reason)
}

// referencedVars are the names a value takes through $(NAME), the kubelet's expansion of
// another variable of the container.
func referencedVars(v string) []string {
	var out []string
	for {
		i := strings.Index(v, "$(")
		if i < 0 {
			return out
		}
		v = v[i+2:]
		j := strings.IndexByte(v, ')')
		if j < 0 {
			return out
		}
		out = append(out, v[:j])
		v = v[j+1:]
	}
}

// mountedConfig are the ConfigMap and Secret volumes the containers mount, as candidates.
func (r *ranker) mountedConfig() []endpointCandidate {
	spec := &r.in.Template.Spec
	mounted := map[string]bool{}
	for ci := range spec.Containers {
		for _, m := range spec.Containers[ci].VolumeMounts {
			mounted[m.Name] = true
		}
	}
	var out []endpointCandidate
	for vi := range spec.Volumes {
		v := &spec.Volumes[vi]
		if !mounted[v.Name] {
			continue
		}
		p := r.specPath.Child("volumes").Index(vi)
		switch {
		case v.ConfigMap != nil:
			out = append(out, endpointCandidate{path: p.Child("configMap"), value: "ConfigMap " + v.ConfigMap.Name, volume: true})
		case v.Secret != nil:
			out = append(out, endpointCandidate{path: p.Child("secret"), value: "Secret " + v.Secret.SecretName, volume: true})
		}
	}
	return out
}

// valueRef names where a variable's value comes from, and the field that says so.
func valueRef(vf *corev1.EnvVarSource, p *field.Path) (string, *field.Path) {
	switch {
	case vf.SecretKeyRef != nil:
		return "Secret/" + vf.SecretKeyRef.Name + " key " + vf.SecretKeyRef.Key, p.Child("secretKeyRef", "key")
	case vf.ConfigMapKeyRef != nil:
		return "ConfigMap/" + vf.ConfigMapKeyRef.Name + " key " + vf.ConfigMapKeyRef.Key, p.Child("configMapKeyRef", "key")
	}
	return "", nil
}

// endpointValue reports a value that names somewhere to connect to, a JDBC URL
// (jdbc:mysql://...) among them.
func endpointValue(v string) bool {
	return NamesEndpoint(v) || strings.Contains(v, "://")
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// endpointLike matches a value that names somewhere to connect to: host:port, a URL, a DSN.
var endpointLike = regexp.MustCompile(`(?i)^[a-z][a-z0-9+.-]*://|^[a-z0-9][a-z0-9.-]*:\d{2,5}(/|$)|@[a-z0-9][a-z0-9.-]*(:\d+)?/`)

// NamesEndpoint reports whether a spec value (or what a --flag=value argument sets) names
// somewhere to connect to.
func NamesEndpoint(v string) bool { return endpointLike.MatchString(flagValue(v)) }

// flagValue is what a --flag=value argument sets, or the value itself.
func flagValue(v string) string {
	if i := strings.LastIndexByte(v, '='); i >= 0 {
		return v[i+1:]
	}
	return v
}
