package dump

import (
	"fmt"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// A dump is text anyone can write: a name the API server would refuse ("api;curl x|sh") would
// reach the commands the report suggests and the console copies. Objects are read only under
// names the API server accepts, as it validates them on create (k8s.io/kubernetes
// pkg/apis/core/validation): a namespace is a DNS-1123 label, a Service's name a DNS-1035
// label, every other kind's a DNS-1123 subdomain.

// nameProblem says why the API server would refuse an object of kind named name in namespace
// ns; "" when it would not. The grammar is checked byte by byte (a read files every event and
// pod of a dump through here); apimachinery words what is wrong.
func nameProblem(kind, ns, name string) string {
	if ns != "" && !dnsLabel(ns, false) {
		return fmt.Sprintf("namespace %q: %s", ns, strings.Join(apivalidation.ValidateNamespaceName(ns, false), "; "))
	}
	if kind == "Service" {
		if !dnsLabel(name, true) {
			return fmt.Sprintf("name %q: %s", name, strings.Join(apivalidation.NameIsDNS1035Label(name, false), "; "))
		}
		return ""
	}
	if !dnsSubdomain(name) {
		return fmt.Sprintf("name %q: %s", name, strings.Join(apivalidation.NameIsDNSSubdomain(name, false), "; "))
	}
	return ""
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// dnsLabel checks a DNS-1123 label, or with rfc1035 a DNS-1035 label (a letter first).
func dnsLabel(s string, rfc1035 bool) bool {
	if len(s) == 0 || len(s) > 63 || !alnum(s[0]) || !alnum(s[len(s)-1]) || rfc1035 && (s[0] < 'a' || s[0] > 'z') {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if !alnum(s[i]) && s[i] != '-' {
			return false
		}
	}
	return true
}

// dnsSubdomain checks a DNS-1123 subdomain: labels of lowercase letters, digits and inner
// hyphens, joined by dots, 253 bytes at most.
func dnsSubdomain(s string) bool {
	if len(s) == 0 || len(s) > 253 || !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		c := s[i]
		switch {
		case alnum(c):
		case c == '-':
			if s[i-1] == '.' || s[i+1] == '.' {
				return false
			}
		case c == '.':
			if s[i-1] == '.' {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// badNames counts the objects skipped for their names and keeps the first, for one note.
type badNames struct {
	n     int
	first string
}

func (b *badNames) add(kind, file, problem string) {
	if b.n == 0 {
		b.first = fmt.Sprintf("a %s in %q: %s", kind, file, problem)
	}
	b.n++
}

func (b *badNames) note() (snapshot.Visibility, bool) {
	switch b.n {
	case 0:
		return snapshot.Visibility{}, false
	case 1:
		return snapshot.Visibility{Reason: "an object has a name the API server refuses and was not read: " + b.first}, true
	default:
		return snapshot.Visibility{Reason: fmt.Sprintf("%d objects have names the API server refuses and were not read; the first, %s", b.n, b.first)}, true
	}
}

// skippedFiles counts the files of a directory a read leaves out, and names the first.
type skippedFiles struct {
	n     int
	first string
}

func (f *skippedFiles) add(path, why string) {
	if f.n == 0 {
		f.first = fmt.Sprintf("%q: %s", path, why)
	}
	f.n++
}

func (f *skippedFiles) note() (snapshot.Visibility, bool) {
	switch f.n {
	case 0:
		return snapshot.Visibility{}, false
	case 1:
		return snapshot.Visibility{Reason: "a file of the dump's directory was not read: " + f.first}, true
	default:
		return snapshot.Visibility{Reason: fmt.Sprintf("%d files of the dump's directory were not read; the first, %s", f.n, f.first)}, true
	}
}
