package live

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Kubeconfig is the kubeconfig the flags name, read and parsed once, for a command that reads
// many of its contexts (a fleet): each context's source is built from it without reading the
// files again, and sources that reach the same server with the same credentials share one
// connection (Connections).
type Kubeconfig struct {
	flags  *genericclioptions.ConfigFlags
	raw    clientcmdapi.Config
	access clientcmd.ConfigAccess
	conns  *Connections
	// lists, set on the kubeconfig OneRead returns, shares cluster-scoped lists.
	lists *clusterLists
}

// LoadKubeconfig reads the kubeconfig files the flags name. The flags' --context is ignored:
// Source names the context.
func LoadKubeconfig(flags *genericclioptions.ConfigFlags) (*Kubeconfig, error) {
	loader := flags.ToRawKubeConfigLoader()
	raw, err := loader.RawConfig()
	if err != nil {
		return nil, kubeconfigError(err)
	}
	return &Kubeconfig{flags: flags, raw: raw, access: loader.ConfigAccess(), conns: NewConnections()}, nil
}

// OneRead returns the kubeconfig for one read of the fleet (an audit, a console's refresh): the
// sources built from it that reach one server with one identity list each cluster-scoped kind
// (Nodes) once between them, and share its answer, objects or error, as each would have
// listed it alone; their connections are the kubeconfig's. The answers are kept for as long as
// the returned kubeconfig is used, so a later read takes a new one; a watch must not be built
// from it.
func (k *Kubeconfig) OneRead() *Kubeconfig {
	c := *k
	c.lists = newClusterLists()
	return &c
}

// Contexts names every context of the kubeconfig, sorted.
func (k *Kubeconfig) Contexts() []string { return slices.Sorted(maps.Keys(k.raw.Contexts)) }

// Server is the server URL of the context's cluster as the kubeconfig names it (before
// --server, which overrides it for every context alike), "" for a context or cluster it does
// not hold.
func (k *Kubeconfig) Server(name string) string {
	c := k.raw.Contexts[name]
	if c == nil {
		return ""
	}
	if cl := k.raw.Clusters[c.Cluster]; cl != nil {
		return cl.Server
	}
	return ""
}

// Has reports whether the kubeconfig holds the context.
func (k *Kubeconfig) Has(name string) bool { return k.raw.Contexts[name] != nil }

// Source builds the source of one context, as New does from flags naming that context: the
// same overrides (-n, --server, --token, ...) apply. It does not contact the server.
func (k *Kubeconfig) Source(name string, opts Options) (*Source, error) {
	if name == "" {
		return nil, errors.New("no context named; pass --context")
	}
	if !k.Has(name) {
		return nil, fmt.Errorf("context %q not in the kubeconfig", name)
	}
	overrides := configOverrides(k.flags)
	overrides.CurrentContext = name
	// A fleet never prompts: twenty contexts cannot share one terminal's password prompt.
	cc := clientcmd.NewNonInteractiveClientConfig(k.raw, name, overrides, k.access)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, kubeconfigError(err)
	}
	if k.flags.WrapConfigFn != nil {
		cfg = k.flags.WrapConfigFn(cfg)
	}
	ns := ""
	if !opts.AllNamespaces && len(dedupe(opts.Namespaces)) == 0 {
		if ns, _, err = cc.Namespace(); err != nil {
			return nil, kubeconfigError(err)
		}
	}
	return newSource(cfg, name, ns, opts, k.conns, k.lists)
}

// configOverrides are the overrides the kubeconfig flags make, as ConfigFlags binds them
// (k8s.io/cli-runtime genericclioptions.ConfigFlags.toRawKubeConfigLoader), whose own are
// not exported; the context is the caller's.
func configOverrides(f *genericclioptions.ConfigFlags) *clientcmd.ConfigOverrides {
	o := &clientcmd.ConfigOverrides{ClusterDefaults: clientcmd.ClusterDefaults}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	if f.CertFile != nil {
		o.AuthInfo.ClientCertificate = *f.CertFile
	}
	if f.KeyFile != nil {
		o.AuthInfo.ClientKey = *f.KeyFile
	}
	if f.BearerToken != nil {
		o.AuthInfo.Token = *f.BearerToken
	}
	o.AuthInfo.Impersonate = str(f.Impersonate)
	o.AuthInfo.ImpersonateUID = str(f.ImpersonateUID)
	if f.ImpersonateGroup != nil {
		o.AuthInfo.ImpersonateGroups = *f.ImpersonateGroup
	}
	if f.ImpersonateUserExtra != nil && len(*f.ImpersonateUserExtra) > 0 {
		extra := map[string][]string{}
		for _, kv := range *f.ImpersonateUserExtra {
			if key, value, ok := strings.Cut(kv, "="); ok {
				extra[key] = append(extra[key], value)
			}
		}
		o.AuthInfo.ImpersonateUserExtra = extra
	}
	o.AuthInfo.Username = str(f.Username)
	o.AuthInfo.Password = str(f.Password)
	o.ClusterInfo.Server = str(f.APIServer)
	o.ClusterInfo.TLSServerName = str(f.TLSServerName)
	o.ClusterInfo.CertificateAuthority = str(f.CAFile)
	if f.Insecure != nil {
		o.ClusterInfo.InsecureSkipTLSVerify = *f.Insecure
	}
	if f.DisableCompression != nil {
		o.ClusterInfo.DisableCompression = *f.DisableCompression
	}
	o.ClusterInfo.ProxyURL = str(f.ProxyURL)
	o.Context.Cluster = str(f.ClusterName)
	o.Context.AuthInfo = str(f.AuthInfoName)
	o.Context.Namespace = str(f.Namespace)
	o.Timeout = str(f.Timeout)
	return o
}
