package diagnose

import (
	"cmp"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestSortWorkloadsInPlace holds the in-place move along the permutation's cycles to a stable
// sort into a list of its own, on random reports with ties, fixed points and long cycles.
func TestSortWorkloadsInPlace(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for round := range 200 {
		n := rng.Intn(60)
		r := &Report{}
		for i := range n {
			r.Workloads = append(r.Workloads, Diagnosis{
				Kind:      []string{"Deployment", "StatefulSet"}[rng.Intn(2)],
				Namespace: "ns" + strconv.Itoa(rng.Intn(3)),
				Name:      "w" + strconv.Itoa(rng.Intn(8)),
				Shape:     Shapes[rng.Intn(len(Shapes))],
				// Headline tells equal keys apart: the sort must keep their order.
				Headline: strconv.Itoa(i),
			})
		}
		want := slices.Clone(r.Workloads)
		slices.SortStableFunc(want, func(a, b Diagnosis) int {
			return cmp.Or(cmp.Compare(a.Shape.Severity(), b.Shape.Severity()),
				strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name),
				strings.Compare(a.Kind, b.Kind))
		})
		sortWorkloads(r)
		for i := range want {
			if g, w := r.Workloads[i], want[i]; g.Headline != w.Headline || g.Name != w.Name {
				t.Fatalf("round %d: place %d holds %s/%s#%s, want %s/%s#%s", round, i, g.Namespace, g.Name, g.Headline, w.Namespace, w.Name, w.Headline)
			}
		}
	}
}
