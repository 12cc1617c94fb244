package dump

import (
	"fmt"
	"strings"
	"testing"

	jsoniter "github.com/json-iterator/go"
	"github.com/modern-go/reflect2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestFewerAllocationsDecoders: every variant of the fast decoder decodes slices, maps with
// string keys, timestamps, quantities, IntOrString, strings and optional numbers with the
// decoders of decode_fast.go and decode_fast_exact.go, not json-iterator's (which they would
// silently stay if a new json-iterator laid its decoders out otherwise), and a slice decoded
// holds no room beyond its elements.
func TestFewerAllocationsDecoders(t *testing.T) {
	for i, api := range []jsoniter.API{fastJSON, fastJSONKeep, fastJSONPlain, fastJSONKeepPlain} {
		for _, c := range []struct {
			v    any
			want string
		}{
			{&[]corev1.PodCondition{}, "*dump.exactSlice"},
			{&[]string{}, "*dump.exactSlice"},
			{&map[string]string{}, "dump.stringMapDecoder"},
			{&corev1.ResourceList{}, "*dump.stringKeyMapDecoder"},
			{&intstr.IntOrString{}, "dump.intOrStringDecoder"},
			{&metav1.Time{}, "dump.timeDecoder"},
			{&metav1.MicroTime{}, "dump.timeDecoder"},
			{&resource.Quantity{}, "dump.quantityDecoder"},
			{new(string), "dump.blockString"},
			{new(corev1.PodPhase), "dump.blockString"},
			{new(*int64), "dump.blockInt64Ptr"},
			{new(*bool), "dump.blockBoolPtr"},
			{&[]byte{}, "*jsoniter.base64Codec"},
			{&[]corev1.Container{}, "*dump.exactSlice"},
		} {
			if got := typeName(api.DecoderOf(reflect2.TypeOf(c.v))); got != c.want {
				t.Errorf("variant %d: decoder of %T is %s, want %s", i, c.v, got, c.want)
			}
		}
	}
	raw := `{"metadata":{"name":"p","labels":{"a":"1","b":"2","c":"3"}},"spec":{"containers":[` +
		`{"name":"a","env":[{"name":"A"},{"name":"B"},{"name":"C"}],"resources":{"limits":{"cpu":"1","memory":"1Gi","pods":"3"}},"livenessProbe":{"httpGet":{"port":"http"}}},` +
		`{"name":"b","readinessProbe":{"tcpSocket":{"port":8080}}},{"name":"c"}]},` +
		`"status":{"conditions":[{"type":"A"},{"type":"B"},{"type":"C"},{"type":"D"},{"type":"E"}]}}`
	for _, text := range []string{raw, strings.Replace(raw, `"name":"p"`, `"name":"\u0070"`, 1)} {
		obj, err := decodeObject([]byte(text), schema.GroupVersionKind{Version: "v1", Kind: "Pod"})
		if err != nil {
			t.Fatal(err)
		}
		pod := obj.(*corev1.Pod)
		c := pod.Spec.Containers
		for name, lc := range map[string][2]int{
			"containers": {len(c), cap(c)},
			"env":        {len(c[0].Env), cap(c[0].Env)},
			"conditions": {len(pod.Status.Conditions), cap(pod.Status.Conditions)},
		} {
			if lc[0] != lc[1] || lc[0] < 3 {
				t.Errorf("%s: length %d, capacity %d", name, lc[0], lc[1])
			}
		}
		if got := c[0].LivenessProbe.HTTPGet.Port; got != intstr.FromString("http") {
			t.Errorf("string port decoded as %+v", got)
		}
		if got := c[1].ReadinessProbe.TCPSocket.Port; got != intstr.FromInt32(8080) {
			t.Errorf("number port decoded as %+v", got)
		}
		if got := c[0].Resources.Limits.Memory().String(); got != "1Gi" || len(c[0].Resources.Limits) != 3 {
			t.Errorf("limits decoded as %v", c[0].Resources.Limits)
		}
		if len(pod.Labels) != 3 || pod.Labels["b"] != "2" {
			t.Errorf("labels decoded as %v", pod.Labels)
		}
		sameDecode(t, []byte(text), schema.GroupVersionKind{Version: "v1", Kind: "Pod"})
	}
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }
