package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/fieldpath"
	"github.com/kubediagnose/kubectl-diagnose/internal/redact"
	"github.com/kubediagnose/kubectl-diagnose/internal/report"
)

// copyView is one copy as the Copies tab and the strip show it.
type copyView struct {
	Name, Revision, Phase, Reason, Message, Node, Age string
	Ready, Serving                                    bool
	Restarts                                          int32
}

// copiesOf lists a workload's copies: the engine's view when it gave one, else read from pods.
func (ds *dataset) copiesOf(d *diagnose.Diagnosis, pods []*corev1.Pod) []copyView {
	var copies []diagnose.Copy
	if d.Detail != nil {
		copies = d.Detail.Copies()
	}
	if len(copies) > 0 {
		out := make([]copyView, len(copies))
		for i, c := range copies {
			out[i] = copyView{
				Name: Sanitize(c.Name), Revision: Sanitize(c.Revision), Phase: Sanitize(c.Phase),
				Reason: Sanitize(c.Reason), Message: Sanitize(c.Message), Node: Sanitize(c.Node),
				Age: report.CopyAge(c.AgeSeconds), Ready: c.Ready, Serving: c.Serving, Restarts: c.Restarts,
			}
		}
		return out
	}
	ref := ds.snap.ReferenceTime
	serving := int(d.Counts.Serving)
	out := make([]copyView, 0, len(pods))
	for _, p := range pods {
		c := copyView{
			Name: Sanitize(p.Name), Revision: Sanitize(revisionOf(p)), Phase: Sanitize(string(p.Status.Phase)),
			Node: Sanitize(p.Spec.NodeName), Age: "-",
		}
		if !p.CreationTimestamp.IsZero() && !ref.IsZero() {
			c.Age = duration.HumanDuration(ref.Sub(p.CreationTimestamp.Time))
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				c.Ready = true
			}
		}
		if c.Ready && serving > 0 {
			c.Serving = true
			serving--
		}
		for _, cs := range p.Status.ContainerStatuses {
			c.Restarts += cs.RestartCount
			switch {
			case c.Reason != "":
			case cs.State.Waiting != nil:
				c.Reason, c.Message = Sanitize(cs.State.Waiting.Reason), Sanitize(cs.State.Waiting.Message)
			case cs.State.Terminated != nil:
				c.Reason, c.Message = Sanitize(cs.State.Terminated.Reason), Sanitize(cs.State.Terminated.Message)
			case cs.State.Running != nil && !cs.Ready:
				c.Reason = "NotReady"
			}
		}
		if c.Reason == "" {
			for _, cond := range p.Status.Conditions {
				if cond.Status != corev1.ConditionTrue && cond.Reason != "" {
					c.Reason, c.Message = Sanitize(cond.Reason), Sanitize(cond.Message)
					break
				}
			}
		}
		out = append(out, c)
	}
	return out
}

// headline is the engine's headline or, without one, the counts in the problem's terms.
func headline(d *diagnose.Diagnosis) string {
	if d.Headline != "" {
		return Sanitize(d.Headline)
	}
	return fmt.Sprintf("%d of %d copies exist · %d serving", d.Counts.Existing, d.Counts.Declared, d.Counts.Serving)
}

// strip draws one cell per copy: ● serving, ○ exists but not serving, · declared but missing.
func (st Styles) strip(d *diagnose.Diagnosis, copies []copyView, width int) string {
	serving := int(d.Counts.Serving)
	existing := int(d.Counts.Existing)
	if len(copies) > 0 {
		existing, serving = len(copies), 0
		for _, c := range copies {
			if c.Serving {
				serving++
			}
		}
	}
	idle := max(existing-serving, 0)
	missing := max(int(d.Counts.Declared)-existing, 0)
	if serving+idle+missing > width || serving+idle+missing > 60 {
		return st.OK.Render(fmt.Sprintf("●×%d", serving)) + " " +
			st.Fg(ShapeColor(d.Shape), fmt.Sprintf("○×%d", idle)) + " " + st.Dim.Render(fmt.Sprintf("·×%d", missing))
	}
	return st.OK.Render(strings.Repeat("●", serving)) + st.Fg(ShapeColor(d.Shape), strings.Repeat("○", idle)) +
		st.Dim.Render(strings.Repeat("·", missing))
}

// wrap word-wraps plain text to width and returns its lines, each prefixed by indent. It
// breaks after a space, a comma or a slash (a path, an image), never inside a word that fits
// a line: `--to-revision=1` stays whole.
func wrap(text string, width int, indent string) []string {
	w := max(width-ansi.StringWidth(indent), 8)
	var out []string
	for _, l := range wordWrapAt(text, w, w, " ,/") {
		out = append(out, indent+l)
	}
	return out
}

// diagnosisLines is the Diagnosis tab: the verdict, the fix and the reasons for both; excerpt
// is the index of the suspect's line in its excerpt of the pod template, or -1.
func (ds *dataset) diagnosisLines(st Styles, d *diagnose.Diagnosis, copies []copyView, spec specView, width int) (_ []string, excerpt int) {
	var out []string
	excerpt = -1
	add := func(l ...string) { out = append(out, l...) }
	for _, l := range wrap(headline(d), width, "") {
		add(st.Bold.Render(l))
	}
	add("copies  " + st.strip(d, copies, width-30) + st.Dim.Render(fmt.Sprintf("  %d/%d exist · %d serving",
		d.Counts.Existing, d.Counts.Declared, d.Counts.Serving)))
	meaning := wrap(string(d.Shape)+": "+report.ShapeMeaning(d.Shape)+".", width, "")
	meaning[0] = st.ShapeText(d.Shape) + strings.TrimPrefix(meaning[0], string(d.Shape))
	add(meaning...)
	if d.Waived != nil {
		add(wrap(report.WaivedMark+": "+report.WaiverText(d.Waived)+" (not counted by --fail-on)", width, "")...)
	}
	if d.Shape.Broken() || d.Cause != diagnose.CauseUnknown {
		add(wrap("cause: "+report.CauseSentence(d), width, "")...)
		if a := d.Argument; a != nil {
			for _, l := range wrap(Sanitize(a.For), width, "       ") {
				add(st.Dim.Render(l))
			}
			if a.Against != "" {
				for _, l := range wrap(Sanitize(a.Against), width, "       ") {
					add(st.Dim.Render(l))
				}
			}
		}
	}
	if d.Fix != "" {
		fix := wrap(Sanitize(d.Fix), width, "     ")
		fix[0] = st.Title.Render("fix: ") + st.Bold.Render(strings.TrimPrefix(fix[0], "     "))
		add(fix...)
		add(st.Dim.Render("     y copies it, Y a summary with the cause and the suspect"))
	}

	add("", st.Section.Render("Suspects"))
	if len(d.Suspects) == 0 {
		add(st.Dim.Render("no spec field implicated"))
	}
	for i := range d.Suspects {
		s := &d.Suspects[i]
		short := orDash(report.ShortSuspectOf(d, s))
		path := report.PathText(s.Path)
		add(fmt.Sprintf("%d. %s  %s", i+1, st.Bold.Render(short), st.Dim.Render(string(s.Confidence))))
		add(wrap(Sanitize(s.Object)+" "+Sanitize(path), width, "   ")...)
		add(wrap("now: "+Sanitize(s.Value), width, "   ")...)
		if s.PreviousValue != "" {
			add(st.Dim.Render(ansi.Truncate("   was: "+Sanitize(s.PreviousValue), width, "…")))
		}
		if s.Reason != "" {
			for _, l := range wrap(Sanitize(s.Reason), width, "   ") {
				add(st.Dim.Render(l))
			}
		}
	}
	if spec.suspect >= 0 {
		add("", st.Section.Render("Pod template")+st.Dim.Render("  (5 Spec shows all of it)"))
		from, to := max(spec.suspect-3, 0), min(spec.suspect+4, len(spec.lines))
		excerpt = len(out) + spec.suspect - from
		add(spec.render(st, from, to, width)...)
	}

	add("", st.Section.Render("Revision diff"))
	add(ds.diffLines(st, d, width)...)

	add("", st.Section.Render("Evidence"))
	if len(d.Evidence) == 0 {
		add(st.Dim.Render("none recorded"))
	}
	for _, e := range d.Evidence {
		text := fmt.Sprintf("[%s] %s", e.Source, Sanitize(e.Message))
		if e.Count > 1 {
			text += fmt.Sprintf(" ×%d", e.Count)
		}
		if len(e.Objects) > 0 {
			text += " · on " + report.ObjectList(e.Objects)
		}
		lines := wrap(text, width, "  ")
		lines[0] = "•" + strings.TrimPrefix(lines[0], " ")
		add(lines...)
	}
	if len(d.SignalGaps) > 0 {
		add("", st.Section.Render("Signal gaps"))
		for _, g := range d.SignalGaps {
			lines := wrap(Sanitize(g.Path)+": "+Sanitize(g.Message), width, "  ")
			lines[0] = "•" + strings.TrimPrefix(lines[0], " ")
			add(lines...)
		}
	}
	return out, excerpt
}

// diffLines shows what changed between the last serving revision and the current one.
func (ds *dataset) diffLines(st Styles, d *diagnose.Diagnosis, width int) []string {
	var out []string
	cur, last := "", ""
	if d.Revisions != nil {
		cur, last = d.Revisions.Current, d.Revisions.LastServing
	}
	if d.Detail != nil {
		if d.Detail.CurrentRevision != "" {
			cur = d.Detail.CurrentRevision
		}
		if d.Detail.LastServingRevision != "" {
			last = d.Detail.LastServingRevision
		}
	}
	switch {
	case cur == "" && last == "":
		return []string{st.Dim.Render("no revision history in the snapshot")}
	case last == "":
		out = append(out, st.Dim.Render(ansi.Truncate("no revision has served; current is "+Sanitize(cur), width, "…")))
	case last == cur:
		out = append(out, st.Dim.Render(ansi.Truncate("current revision "+Sanitize(cur)+" is the last that served: the spec did not change", width, "…")))
	default:
		out = append(out, st.Dim.Render(ansi.Truncate("last serving "+Sanitize(last)+" → current "+Sanitize(cur), width, "…")))
	}
	if d.Detail != nil && len(d.Detail.Changes) > 0 {
		for _, c := range d.Detail.Changes {
			p := report.PathText(c.Path)
			for _, l := range wrap("- "+p+": "+Sanitize(c.Previous), width, "") {
				out = append(out, st.DiffDel.Render(l))
			}
			for _, l := range wrap("+ "+p+": "+Sanitize(c.Current), width, "") {
				out = append(out, st.DiffAdd.Render(l))
			}
		}
		return out
	}
	if d.Revisions != nil {
		for _, p := range d.Revisions.ChangedPaths {
			out = append(out, ansi.Truncate("~ "+Sanitize(p), width, "…"))
		}
	}
	return out
}

// copiesLines is the Copies tab: a row per copy, whole, which the tab scrolls sideways, and
// under it the copy's message wrapped to the width.
func copiesLines(st Styles, copies []copyView, width int) []paneLine {
	if len(copies) == 0 {
		return []paneLine{fixedLine(st.Dim.Render("no copies in the snapshot"))}
	}
	nameW, reasonW := len("NAME"), len("REASON")
	for _, c := range copies {
		nameW = max(nameW, ansi.StringWidth(c.Name))
		reasonW = max(reasonW, ansi.StringWidth(orDash(c.Reason)))
	}
	head := fmt.Sprintf("%s %-9s %-5s %-8s %-5s %s %s", pad("NAME", nameW), "PHASE", "READY", "RESTARTS", "AGE", pad("REASON", reasonW), "NODE")
	out := []paneLine{{body: st.Dim.Render(head)}}
	for _, c := range copies {
		ready := "no"
		if c.Ready {
			ready = "yes"
		}
		if c.Serving {
			ready = "serve"
		}
		l := fmt.Sprintf("%s %-9s %-5s %-8d %-5s %s %s", pad(c.Name, nameW), c.Phase, ready, c.Restarts, c.Age, pad(orDash(c.Reason), reasonW), c.Node)
		out = append(out, paneLine{body: l})
		if c.Message != "" {
			for _, ml := range wrap(c.Message, width, "    ") {
				out = append(out, fixedLine(st.Dim.Render(ml)))
			}
		}
	}
	return out
}

// eventsLines is the Events tab, newest first.
func (ds *dataset) eventsLines(st Styles, evs []*corev1.Event, width int) []string {
	if len(evs) == 0 {
		return []string{st.Dim.Render("no events in the snapshot (events expire after an hour by default)")}
	}
	ref := ds.snap.ReferenceTime
	var out []string
	for _, e := range evs {
		ago := "-"
		if t := eventTime(e); !t.IsZero() && !ref.IsZero() {
			ago = duration.HumanDuration(ref.Sub(t))
		}
		typ := Sanitize(e.Type)
		if e.Type == corev1.EventTypeWarning {
			typ = st.Warn.Render(typ)
		}
		count := ""
		if e.Count > 1 {
			count = " ×" + strconv.Itoa(int(e.Count))
		}
		head := fmt.Sprintf("%-5s %s %s %s%s", ago, typ, st.Bold.Render(Sanitize(e.Reason)),
			strings.ToLower(Sanitize(e.InvolvedObject.Kind))+"/"+Sanitize(e.InvolvedObject.Name), count)
		out = append(out, ansi.Truncate(head, width, "…"))
		out = append(out, wrap(Sanitize(e.Message), width, "      ")...)
	}
	return out
}

// specView is a workload's pod template as YAML, with the top suspect's line found.
type specView struct {
	lines []string
	// suspect is the index of the suspect's line, or -1.
	suspect int
}

// newSpecView renders a workload's pod template, its credentials hidden by sc, and finds the
// line of its top suspect (or the nearest enclosing field when the suspect is a field the
// template leaves out).
func (ds *dataset) newSpecView(d *diagnose.Diagnosis, sc *redact.Scope) specView {
	obj, ok := ds.objects[workloadKey{d.Kind, d.Namespace, d.Name}]
	if !ok || obj.Template == nil {
		return specView{suspect: -1}
	}
	lines, index, err := pathYAML(obj.Root.String(), sc.Template(obj.Template))
	if err != nil {
		return specView{lines: []string{Sanitize(err.Error())}, suspect: -1}
	}
	v := specView{lines: lines, suspect: -1}
	for _, s := range d.Suspects {
		if s.Path == nil || (s.Object != "" && !strings.HasPrefix(s.Object, d.Kind+"/")) {
			continue
		}
		p := s.Path.String()
		for p != "" {
			if i, ok := index[p]; ok {
				v.suspect = i
				break
			}
			p = fieldpath.Parent(p)
		}
		break
	}
	return v
}

// render draws lines [from, to) with line numbers, the suspect highlighted, cut to width.
func (v specView) render(st Styles, from, to, width int) []string {
	out := make([]string, 0, to-from)
	for _, l := range v.paneLines(st, from, to) {
		room := max(width-ansi.StringWidth(l.gutter), 1)
		out = append(out, l.gutter+ansi.Truncate(l.body, room, "…"))
	}
	return out
}

// paneLines are lines [from, to) for the Spec tab: the line number and the suspect's ▶ stay
// put while the YAML scrolls sideways.
func (v specView) paneLines(st Styles, from, to int) []paneLine {
	numW := len(strconv.Itoa(len(v.lines)))
	out := make([]paneLine, 0, to-from)
	for i := from; i < to; i++ {
		num := fmt.Sprintf("%*d ", numW, i+1)
		if i == v.suspect {
			out = append(out, paneLine{gutter: st.Highlight.Render("▶" + num), body: st.Highlight.Render(v.lines[i])})
			continue
		}
		out = append(out, paneLine{gutter: " " + st.LineNumber.Render(num), body: v.lines[i]})
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }

// since renders how long ago t was, relative to now.
func since(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return duration.HumanDuration(now.Sub(t))
}
