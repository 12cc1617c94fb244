package diagnose_test

import (
	"fmt"
	"log"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
)

// Diagnose a `kubectl cluster-info dump` directory and read one workload's verdict: its shape,
// who serves, the spec field most likely responsible, and where the fault lies.
func ExampleDiagnose() {
	s, err := dump.Read("../testdata/scenarios/dev-ingester/dump", nil)
	if err != nil {
		log.Fatal(err)
	}
	r := diagnose.Diagnose(s)
	d := r.Find("Deployment", "dev-ingester", "telemetry-ingester")
	fmt.Println(d.Shape)
	fmt.Printf("%d of %d serving\n", d.Counts.Serving, d.Counts.Declared)
	fmt.Println(d.Suspects[0].Object, d.Suspects[0].Path)
	fmt.Printf("%s -> %s\n", d.Suspects[0].PreviousValue, d.Suspects[0].Value)
	fmt.Println(d.Cause)
	fmt.Println(d.Fix)
	// Output:
	// live-but-idle
	// 0 of 5 serving
	// Deployment/telemetry-ingester spec.template.spec.containers[0].env[0].value
	// telemetry-intake.internal:8443 -> telemetry-intake.internal:9443
	// spec
	// kubectl rollout undo deployment/telemetry-ingester --to-revision=1 -n dev-ingester
}
