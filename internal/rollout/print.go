package rollout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/report"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Formats are the -o values of the rollout command.
var Formats = []string{"text", "json"}

// ResultKind is the kind of the JSON document PrintResult writes.
const ResultKind = "RolloutResult"

// ProgressLine renders one event as one line: elapsed seconds, phase, and why.
func ProgressLine(ev Event) string {
	return fmt.Sprintf("%6s  %-11s  %s", roundSeconds(ev.Elapsed), ev.Decision.Phase, report.Clean(ev.Decision.Why))
}

// document is the JSON form of a Result.
type document struct {
	APIVersion     string                `json:"apiVersion"`
	Kind           string                `json:"kind"`
	Workload       Target                `json:"workload"`
	Result         Phase                 `json:"result"`
	Reason         string                `json:"reason"`
	ElapsedSeconds float64               `json:"elapsedSeconds"`
	SettleSeconds  float64               `json:"settleSeconds"`
	Status         *Status               `json:"status"`
	Diagnosis      json.RawMessage       `json:"diagnosis"`
	Visibility     []snapshot.Visibility `json:"visibility"`
}

// PrintResult writes the final answer: in text, one line and, unless the rollout succeeded, the
// workload's full explanation; in JSON, one document whose diagnosis is explain's JSON.
func PrintResult(w io.Writer, r *Result, format string) error {
	switch format {
	case "json":
		doc := document{
			APIVersion: diagnose.APIVersion, Kind: ResultKind, Workload: r.Target, Result: r.Decision.Phase,
			Reason: r.Decision.Why, ElapsedSeconds: seconds(r.Elapsed), SettleSeconds: seconds(r.Settle),
			Diagnosis: json.RawMessage("null"), Visibility: append([]snapshot.Visibility{}, r.Visibility...),
		}
		if r.Read {
			st := r.Status
			doc.Status = &st
		}
		if r.Diagnosis != nil {
			var b bytes.Buffer
			if err := report.PrintDiagnosis(&b, r.Diagnosis, "json"); err != nil {
				return err
			}
			doc.Diagnosis = bytes.TrimSpace(b.Bytes())
		}
		out, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return fmt.Errorf("encode the rollout result: %w", err)
		}
		_, err = fmt.Fprintf(w, "%s\n", out)
		return err
	case "text", "":
		if _, err := fmt.Fprintln(w, Headline(r)); err != nil {
			return err
		}
		if r.Decision.Phase == PhaseSucceeded || r.Diagnosis == nil {
			return nil
		}
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
		return report.PrintExplain(w, r.Diagnosis)
	}
	return fmt.Errorf("unknown output format %q", format)
}

// Headline is the one line that says how the rollout ended and how long deciding took.
func Headline(r *Result) string {
	verb := map[Phase]string{
		PhaseSucceeded: "rolled out",
		PhaseFailed:    "rollout failed",
		PhaseTimedOut:  "rollout timed out",
	}[r.Decision.Phase]
	if verb == "" {
		verb = "rollout " + string(r.Decision.Phase)
	}
	return fmt.Sprintf("%s %s after %s: %s", r.Target.Ref(), verb, roundSeconds(r.Elapsed), report.Clean(r.Decision.Why))
}

func seconds(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond)) / float64(time.Second)
}
