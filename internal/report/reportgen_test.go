package report

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// reportGen fills report values through reflection, so every field of every type reachable
// from a Report is set, whatever fields the types grow: the printers, which write a workload at a time, are compared with
// encoding/json on what it makes, and a field the writers miss shows as a difference.
type reportGen struct {
	// choose returns a choice in [0, n); it drives every decision of a random or fuzzed fill.
	choose func(n int) int
	// mode is how the fill decides: from choose, or every field populated, or every field zero
	// (nil pointers, slices and maps), or every container present and empty.
	mode genMode
	// invalid lets choose pick values encoding/json refuses (NaN, years past 9999).
	invalid bool
	// raw, when set, supplies arbitrary bytes for strings (a fuzzer's input).
	raw func() string
	n   int
}

type genMode int

const (
	genRandom genMode = iota
	genFull
	genZero
	genEmpty
)

var (
	timeType = reflect.TypeFor[time.Time]()
	pathType = reflect.TypeFor[*field.Path]()
)

// genStrings are the strings that trip a JSON writer: the characters encoding/json escapes
// (quotes, backslash, controls, <, >, &, U+2028/9), those escapeJSON escapes after it (DEL, C1
// controls, format characters, noncharacters, above the BMP too), bytes that are not UTF-8,
// a raw U+FFFD. genLong, longer than the printers' buffer, comes rarely: it dominates the
// run time of a report it is in.
var genStrings = []string{
	"",
	"app-0002",
	"Readiness probe failed: HTTP probe failed with statuscode: 503",
	`<script>alert("x")</script> & more`,
	"line\u2028para\u2029end",
	"\x00\x01\x07\b\t\n\v\f\r\x1b[31m\x1f",
	"del\x7f c1\u0085\u009b",
	"bidi\u202eevil\u2066iso\u2069 zw\u200b\u200d bom\ufeff",
	"tag\U000e0041 nonchar\ufdd0\ufffe\uffff\U0001fffe\U0010ffff",
	"bad\xff\xfe utf8 \xe2\x80 cut \xed\xa0\x80 surrogate \xc0\xaf overlong",
	"replacement \ufffd kept",
	`quote " backslash \ slash / \u0041 \n`,
	"é ü 中文 😀 \U0001f468\u200d\U0001f469",
	"trailing\xe2",
}

var genLong = strings.Repeat("long <&> \u2028 \x85", 8000)

var genFloats = []float64{0, math.Copysign(0, -1), 1, -1.5, 123.456, 1e-6, 9.99e-7, 1e-7, 1.5e-300, 1e20, 1e21, 1.25e21, -2e22, math.MaxFloat64, math.SmallestNonzeroFloat64, 0.1 + 0.2, 1.0 / 3}

var genInts = []int64{0, 1, -1, 42, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64}

var genTimes = []time.Time{
	{},
	time.Date(2026, 11, 24, 12, 29, 53, 0, time.UTC),
	time.Date(2026, 11, 24, 12, 29, 53, 123456789, time.UTC),
	time.Date(2026, 11, 24, 12, 29, 53, 100, time.FixedZone("IST", 5*3600+30*60)),
	time.Date(1, 1, 1, 0, 0, 0, 1, time.FixedZone("", -(3600+17))),
	time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("", 23*3600+59*60)),
	time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
	time.Unix(1764000000, 5).UTC(),
}

// genInvalid are the values encoding/json refuses, which the fill picks only with invalid set.
var (
	genBadFloats = []float64{math.NaN(), math.Inf(1), math.Inf(-1)}
	genBadTimes  = []time.Time{
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 24*3600)),
	}
)

func (g *reportGen) pick(n int) int {
	if n <= 1 {
		return 0
	}
	return g.choose(n)
}

func (g *reportGen) str() string {
	switch g.mode {
	case genFull:
		g.n++
		if g.n%100 == 0 {
			return genLong
		}
		return fmt.Sprintf("s%d<&>\u2028%s", g.n, genStrings[g.n%len(genStrings)])
	case genZero, genEmpty:
		return ""
	}
	if g.raw != nil && g.pick(3) == 0 {
		return g.raw()
	}
	if g.pick(500) == 0 {
		return genLong
	}
	return genStrings[g.pick(len(genStrings))]
}

func (g *reportGen) int() int64 {
	switch g.mode {
	case genFull:
		g.n++
		return int64(g.n)
	case genZero, genEmpty:
		return 0
	}
	return genInts[g.pick(len(genInts))]
}

func (g *reportGen) float() float64 {
	switch g.mode {
	case genFull:
		g.n++
		return float64(g.n) + 0.5
	case genZero, genEmpty:
		return 0
	}
	if g.invalid && g.pick(20) == 0 {
		return genBadFloats[g.pick(len(genBadFloats))]
	}
	return genFloats[g.pick(len(genFloats))]
}

func (g *reportGen) time() time.Time {
	switch g.mode {
	case genFull:
		g.n++
		return genTimes[2].Add(time.Duration(g.n) * time.Second)
	case genZero, genEmpty:
		return time.Time{}
	}
	if g.invalid && g.pick(20) == 0 {
		return genBadTimes[g.pick(len(genBadTimes))]
	}
	return genTimes[g.pick(len(genTimes))]
}

// length is a slice's or map's length; -1 is nil.
func (g *reportGen) length() int {
	switch g.mode {
	case genFull:
		return 2
	case genZero:
		return -1
	case genEmpty:
		return 0
	}
	return g.pick(5) - 1
}

func (g *reportGen) present() bool {
	switch g.mode {
	case genFull, genEmpty:
		return true
	case genZero:
		return false
	}
	return g.pick(3) != 0
}

func (g *reportGen) path() *field.Path {
	if !g.present() {
		return nil
	}
	p := field.NewPath("spec", "template", "spec").Child("containers").Index(int(g.int() & 7))
	return p.Child("env").Key(g.str())
}

// fill sets v, which must be settable, and everything under it.
func (g *reportGen) fill(v reflect.Value) {
	switch v.Type() {
	case timeType:
		v.Set(reflect.ValueOf(g.time()))
		return
	case pathType:
		v.Set(reflect.ValueOf(g.path()))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(g.str())
	case reflect.Bool:
		v.SetBool(g.mode == genFull || g.mode == genRandom && g.pick(2) == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i := g.int()
		if v.OverflowInt(i) {
			i = int64(int32(i))
		}
		v.SetInt(i)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(g.float())
	case reflect.Pointer:
		if !g.present() {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		g.fill(p.Elem())
		v.Set(p)
	case reflect.Slice:
		n := g.length()
		if n < 0 {
			v.SetZero()
			return
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			g.fill(s.Index(i))
		}
		v.Set(s)
	case reflect.Map:
		n := g.length()
		if n < 0 {
			v.SetZero()
			return
		}
		m := reflect.MakeMapWithSize(v.Type(), n)
		for range n {
			k := reflect.New(v.Type().Key()).Elem()
			g.fill(k)
			e := reflect.New(v.Type().Elem()).Elem()
			g.fill(e)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() || f.Tag.Get("json") == "-" && f.Type != pathType {
				continue
			}
			g.fill(v.Field(i))
		}
	default:
		panic(fmt.Sprintf("reportGen cannot fill a %s; teach it, or the printers go untested on it", v.Type()))
	}
}

// genReport returns a Report filled by g.
func (g *reportGen) report() *diagnose.Report {
	r := new(diagnose.Report)
	g.fill(reflect.ValueOf(r).Elem())
	return r
}

// unfilled lists the JSON fields under v left at their zero value, for the full fill's check
// that it reaches every field.
func unfilled(v reflect.Value, at string) []string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return []string{at}
		}
		return unfilled(v.Elem(), at)
	case reflect.Slice, reflect.Map:
		if v.Len() == 0 {
			return []string{at}
		}
		if v.Kind() == reflect.Slice {
			return unfilled(v.Index(0), at+"[0]")
		}
		iter := v.MapRange()
		iter.Next()
		return unfilled(iter.Value(), at+"[key]")
	case reflect.Struct:
		if v.Type() == timeType {
			break
		}
		var out []string
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() || f.Tag.Get("json") == "-" && f.Type != pathType {
				continue
			}
			out = append(out, unfilled(v.Field(i), at+"."+f.Name)...)
		}
		return out
	}
	if v.IsZero() {
		return []string{at}
	}
	return nil
}

// leaves returns the settable values of type want under v (slices' elements and pointers'
// targets included, maps' values not: those are counts).
func leaves(v reflect.Value, want reflect.Type) []reflect.Value {
	if v.Type() == want {
		return []reflect.Value{v}
	}
	var out []reflect.Value
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			out = leaves(v.Elem(), want)
		}
	case reflect.Slice:
		for i := range v.Len() {
			out = append(out, leaves(v.Index(i), want)...)
		}
	case reflect.Struct:
		if v.Type() == timeType {
			break
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				out = append(out, leaves(v.Field(i), want)...)
			}
		}
	}
	return out
}
