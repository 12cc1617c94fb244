package live

import (
	"net/http"

	"k8s.io/client-go/kubernetes"
	appsv1 "k8s.io/client-go/kubernetes/typed/apps/v1"
	batchv1 "k8s.io/client-go/kubernetes/typed/batch/v1"
	corev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	discoveryv1 "k8s.io/client-go/kubernetes/typed/discovery/v1"
	policyv1 "k8s.io/client-go/kubernetes/typed/policy/v1"
	"k8s.io/client-go/rest"
)

// groupsClient is a source's clientset: the clients of the four API groups the tool reads, and
// no others. kubernetes.NewForConfigAndClient builds a REST client for each of some fifty
// groups, content negotiation and all, which was 3–4% of a fleet's CPU, once per context.
// Calling for any other group is a programming error: the embedded interface is nil.
type groupsClient struct {
	kubernetes.Interface
	core      corev1.CoreV1Interface
	apps      appsv1.AppsV1Interface
	batch     batchv1.BatchV1Interface
	discovery discoveryv1.DiscoveryV1Interface
	policy    policyv1.PolicyV1Interface
}

func (c *groupsClient) CoreV1() corev1.CoreV1Interface                { return c.core }
func (c *groupsClient) AppsV1() appsv1.AppsV1Interface                { return c.apps }
func (c *groupsClient) BatchV1() batchv1.BatchV1Interface             { return c.batch }
func (c *groupsClient) DiscoveryV1() discoveryv1.DiscoveryV1Interface { return c.discovery }
func (c *groupsClient) PolicyV1() policyv1.PolicyV1Interface          { return c.policy }

// newGroupsClient builds the clients of the groups the tool reads over one HTTP client.
func newGroupsClient(cfg *rest.Config, hc *http.Client) (kubernetes.Interface, error) {
	c := &groupsClient{}
	var err error
	if c.core, err = corev1.NewForConfigAndClient(cfg, hc); err != nil {
		return nil, err
	}
	if c.apps, err = appsv1.NewForConfigAndClient(cfg, hc); err != nil {
		return nil, err
	}
	if c.batch, err = batchv1.NewForConfigAndClient(cfg, hc); err != nil {
		return nil, err
	}
	if c.discovery, err = discoveryv1.NewForConfigAndClient(cfg, hc); err != nil {
		return nil, err
	}
	if c.policy, err = policyv1.NewForConfigAndClient(cfg, hc); err != nil {
		return nil, err
	}
	return c, nil
}
