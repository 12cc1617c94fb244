package serve

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// Namespace is the prefix of every series the server exports.
const Namespace = "kubectl_diagnose"

// OtherRule is the top_suspect_rule value of a rule ID the catalogue does not list. The engine
// only records catalogued rules; the label keeps its bound even if that ever breaks.
const OtherRule = "other"

// workloadLabels name a workload in every per-workload series.
var workloadLabels = []string{"namespace", "kind", "name"}

// workloadGauge is one per-workload series: its name, help and how a diagnosis gives its value;
// ok false leaves the workload without the series (no copy, no youngest copy age).
type workloadGauge struct {
	name, help string
	value      func(d *diagnose.Diagnosis, age time.Duration) (v float64, ok bool)
}

// workloadGauges are the per-workload series with no label beyond the workload's; the shape and
// info series carry one more label each and are built apart.
var workloadGauges = []workloadGauge{
	{
		name:  "workload_declared_copies",
		help:  "Copies the workload declares: spec.replicas (default 1), a DaemonSet's desiredNumberScheduled.",
		value: func(d *diagnose.Diagnosis, _ time.Duration) (float64, bool) { return float64(d.Counts.Declared), true },
	},
	{
		name:  "workload_existing_copies",
		help:  "Copies of any revision that exist: neither terminating nor finished.",
		value: func(d *diagnose.Diagnosis, _ time.Duration) (float64, bool) { return float64(d.Counts.Existing), true },
	},
	{
		name:  "workload_serving_copies",
		help:  "Copies that serve: Ready and, behind a Service meant for the workload, its ready endpoints.",
		value: func(d *diagnose.Diagnosis, _ time.Duration) (float64, bool) { return float64(d.Counts.Serving), true },
	},
	{
		name: "workload_youngest_copy_age_seconds",
		help: "Age of the workload's youngest copy; absent while it has none.",
		value: func(d *diagnose.Diagnosis, age time.Duration) (float64, bool) {
			if d.YoungestCopySeconds == nil {
				return 0, false
			}
			return float64(*d.YoungestCopySeconds) + age.Seconds(), true
		},
	},
}

// Collector builds the series of a Picture at scrape time. Now, when set, is the server's
// clock: copy ages grow by the time since the report's reference time, so a quiet cluster's
// ages stay true between reports. Without it (a dump) ages are the report's.
type Collector struct {
	picture *Picture
	now     func() time.Time
	rules   map[diagnose.RuleID]bool

	gauges              []*prometheus.Desc
	shape, info, waived *prometheus.Desc
	workloads           *prometheus.Desc
	lastRead            *prometheus.Desc
	diagnosisSeconds    *prometheus.Desc
	readErrors          *prometheus.Desc
	readFailing         *prometheus.Desc
	visibility          *prometheus.Desc
}

var _ prometheus.Collector = (*Collector)(nil)

// NewCollector returns the collector of p; now may be nil (see Collector).
func NewCollector(p *Picture, now func() time.Time) *Collector {
	name := func(s string) string { return prometheus.BuildFQName(Namespace, "", s) }
	c := &Collector{
		picture: p, now: now, rules: map[diagnose.RuleID]bool{},
		shape: prometheus.NewDesc(name("workload_shape"),
			"The workload's shape, what its copies do: 1 on the series of its current shape.",
			append(workloadLabels[:len(workloadLabels):len(workloadLabels)], "shape"), nil),
		waived: prometheus.NewDesc(name("workload_waived"),
			"1 while the workload's kubediagnose.dev/waive annotation waives its verdict; what is the shape or rule ID it names. Absent otherwise.",
			append(workloadLabels[:len(workloadLabels):len(workloadLabels)], "what"), nil),
		info: prometheus.NewDesc(name("workload_info"),
			"The workload's cause (spec, dependency, unknown) and the rule ID of its top suspect (empty without one), as labels; always 1.",
			append(workloadLabels[:len(workloadLabels):len(workloadLabels)], "cause", "top_suspect_rule"), nil),
		workloads: prometheus.NewDesc(name("workloads"),
			"Workloads of each shape in the report, every shape present.", []string{"shape"}, nil),
		lastRead: prometheus.NewDesc(name("last_read_timestamp_seconds"),
			"Reference time of the snapshot the series come from, in seconds since the epoch; absent before the first read.", nil, nil),
		diagnosisSeconds: prometheus.NewDesc(name("diagnosis_duration_seconds"),
			"How long the engine took over the snapshot the series come from.", nil, nil),
		readErrors: prometheus.NewDesc(name("read_errors_total"),
			"Reads and watches of the cluster that failed since the server started.", nil, nil),
		readFailing: prometheus.NewDesc(name("read_failing"),
			"1 while the cluster's reads fail and the series are of the last good read; else 0.", nil, nil),
		visibility: prometheus.NewDesc(name("visibility_entries"),
			"Entries of the report's visibility list: what the identity or the source could not read.", nil, nil),
	}
	for _, r := range diagnose.Rules() {
		c.rules[r.ID] = true
	}
	for _, g := range workloadGauges {
		c.gauges = append(c.gauges, prometheus.NewDesc(name(g.name), g.help, workloadLabels, nil))
	}
	return c
}

// Describe sends every series' descriptor.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.gauges {
		ch <- d
	}
	for _, d := range []*prometheus.Desc{c.shape, c.info, c.waived, c.workloads, c.lastRead, c.diagnosisSeconds, c.readErrors, c.readFailing, c.visibility} {
		ch <- d
	}
}

// Collect sends the series of the newest report.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	st := c.picture.state()
	ch <- prometheus.MustNewConstMetric(c.readErrors, prometheus.CounterValue, float64(st.readErrors))
	failing := 0.0
	if st.failing {
		failing = 1
	}
	ch <- prometheus.MustNewConstMetric(c.readFailing, prometheus.GaugeValue, failing)
	r := st.report
	if r == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.lastRead, prometheus.GaugeValue, float64(r.ReferenceTime.UnixNano())/1e9)
	ch <- prometheus.MustNewConstMetric(c.diagnosisSeconds, prometheus.GaugeValue, st.took.Seconds())
	ch <- prometheus.MustNewConstMetric(c.visibility, prometheus.GaugeValue, float64(len(r.Visibility)))
	shapes := make(map[diagnose.Shape]int, len(diagnose.Shapes))
	var age time.Duration
	if c.now != nil {
		age = max(c.now().Sub(r.ReferenceTime), 0)
	}
	for i := range r.Workloads {
		d := &r.Workloads[i]
		shapes[d.Shape]++
		lv := []string{d.Namespace, d.Kind, d.Name}
		for j, g := range workloadGauges {
			if v, ok := g.value(d, age); ok {
				ch <- prometheus.MustNewConstMetric(c.gauges[j], prometheus.GaugeValue, v, lv...)
			}
		}
		ch <- prometheus.MustNewConstMetric(c.shape, prometheus.GaugeValue, 1, d.Namespace, d.Kind, d.Name, string(d.Shape))
		ch <- prometheus.MustNewConstMetric(c.info, prometheus.GaugeValue, 1, d.Namespace, d.Kind, d.Name, string(d.Cause), c.topRule(d))
		if d.Waived != nil {
			// The waiver applies only to the verdict's own shape or top rule: its label is of
			// the closed vocabularies, whatever else the annotation says.
			ch <- prometheus.MustNewConstMetric(c.waived, prometheus.GaugeValue, 1, d.Namespace, d.Kind, d.Name, c.waivedWhat(d))
		}
	}
	for _, s := range diagnose.Shapes {
		ch <- prometheus.MustNewConstMetric(c.workloads, prometheus.GaugeValue, float64(shapes[s]), string(s))
	}
}

// waivedWhat is the waiver's shape or rule ID as a label, OtherRule outside both vocabularies.
func (c *Collector) waivedWhat(d *diagnose.Diagnosis) string {
	w := diagnose.Shape(d.Waived.What)
	if w.Severity() < len(diagnose.Shapes) || c.rules[diagnose.RuleID(d.Waived.What)] {
		return d.Waived.What
	}
	return OtherRule
}

// topRule is the top suspect's rule ID, "" without a suspect, OtherRule outside the catalogue.
func (c *Collector) topRule(d *diagnose.Diagnosis) string {
	if len(d.Suspects) == 0 {
		return ""
	}
	if id := d.Suspects[0].Rule; c.rules[id] {
		return string(id)
	}
	return OtherRule
}
