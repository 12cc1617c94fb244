package live

import (
	"errors"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
)

// Config resolves the kubeconfig flags as New does, for a command that builds its own clients
// (preflight): the REST config with the source's timeout and user agent, and the namespace the
// context names. It does not contact the server.
func Config(flags *genericclioptions.ConfigFlags) (*rest.Config, string, error) {
	loader := flags.ToRawKubeConfigLoader()
	raw, err := loader.RawConfig()
	if err != nil {
		return nil, "", kubeconfigError(err)
	}
	current := raw.CurrentContext
	if set(flags.Context) {
		current = *flags.Context
	}
	if !set(flags.APIServer) && !set(flags.ClusterName) && !inCluster() {
		switch {
		case len(raw.Clusters) == 0:
			return nil, "", noKubeconfig(loader.ConfigAccess())
		case current == "":
			return nil, "", errors.New("no current context; run kubectl config use-context or pass --context")
		}
	}
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, "", kubeconfigError(err)
	}
	ns, _, err := loader.Namespace()
	if err != nil {
		return nil, "", kubeconfigError(err)
	}
	return tune(cfg), ns, nil
}
