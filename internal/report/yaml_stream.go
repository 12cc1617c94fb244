package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

	"sigs.k8s.io/yaml"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// The yaml printer converts a report to YAML a workload at a time rather than whole: the whole
// conversion (sigs.k8s.io/yaml parses the JSON into generic values and encodes them again)
// held a fleet's report two and three times over, past 2 GB for 2,000 workloads. The encoder
// sorts keys and "workloads" sorts last, and it writes a list under a key unindented, at the
// columns a list alone is written at; so the document is the report's YAML without its
// workloads, up to "workloads:", then each workload's YAML as a list of one.
// TestStreamYAMLIsWriteYAML holds the result to writeYAML.

// yamlEmptyWorkloads is how the encoder ends a report without workloads.
const yamlEmptyWorkloads = "workloads: []\n"

// streamYAMLReport writes r as writeYAML does.
func streamYAMLReport(w io.Writer, r *diagnose.Report) error {
	// Fail on a value JSON refuses before anything is written, as writeYAML does.
	if err := checkJSON(r, streamReport); err != nil {
		return err
	}
	head := *r
	head.Workloads = []diagnose.Diagnosis{}
	b, err := yamlOf(&head)
	if err != nil {
		return err
	}
	if len(r.Workloads) == 0 || !bytes.HasSuffix(b, []byte(yamlEmptyWorkloads)) {
		// A report without workloads is its head; the encoder ending it otherwise (never
		// seen) would leave no place to put them, so it is written whole.
		if len(r.Workloads) == 0 {
			_, err = w.Write(b)
			return err
		}
		return writeYAML(w, r)
	}
	bw := bufio.NewWriterSize(w, streamFlush)
	if _, err := bw.Write(append(b[:len(b)-len(yamlEmptyWorkloads)], "workloads:\n"...)); err != nil {
		return err
	}
	for i := range r.Workloads {
		b, err := yamlOf(r.Workloads[i : i+1])
		if err != nil {
			return err
		}
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// yamlOf is v as writeYAML writes it.
func yamlOf(v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	j, marked := markInvisibleJSON(j)
	b, err := yaml.JSONToYAML(j)
	if err != nil {
		return nil, err
	}
	if marked {
		b = unmarkYAML(b)
	}
	return b, nil
}
