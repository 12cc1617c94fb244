package metrics

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// Defaults of the query range and timeout.
const (
	DefaultTimeout = 10 * time.Second
	DefaultWindow  = time.Hour
	// defaultPoints is how many samples a range query returns when no step is set.
	defaultPoints = 120
	// maxPoints is the most a Prometheus server returns per series of a range query.
	maxPoints = 11000
)

// Config says which Prometheus to ask, how, and which query measures which workload.
type Config struct {
	// URL is the Prometheus base URL, e.g. http://prometheus.monitoring:9090.
	URL string
	// Timeout bounds each query, on the client and (as the timeout parameter) on the server.
	Timeout time.Duration
	// Window is how far before the reference time the range queries start; Step is their
	// resolution (0: Window/120, at least a second).
	Window, Step time.Duration
	// BearerTokenFile and PasswordFile are read on every request, so a rotated token is used.
	BearerTokenFile string
	Username        string
	PasswordFile    string
	TLS             TLS
	// Rules map workloads to queries for teams that cannot annotate; the first match wins.
	Rules []Rule
}

// TLS are the client's TLS options.
type TLS struct {
	CAFile, CertFile, KeyFile, ServerName string
	InsecureSkipVerify                    bool
}

// Rule gives the queries of the workloads it selects.
type Rule struct {
	// Namespace, when set, limits the rule to one namespace.
	Namespace string
	// Selector is matched against the workload's own labels.
	Selector       labels.Selector
	Throughput     string
	ThroughputUnit string
	Backlog        string
	BacklogUnit    string
}

// File is the config file's layout (YAML or JSON).
type File struct {
	Prometheus struct {
		URL                string `json:"url"`
		Timeout            string `json:"timeout"`
		Window             string `json:"window"`
		Step               string `json:"step"`
		BearerTokenFile    string `json:"bearerTokenFile"`
		Username           string `json:"username"`
		PasswordFile       string `json:"passwordFile"`
		CAFile             string `json:"caFile"`
		CertFile           string `json:"certFile"`
		KeyFile            string `json:"keyFile"`
		ServerName         string `json:"serverName"`
		InsecureSkipVerify bool   `json:"insecureSkipVerify"`
	} `json:"prometheus"`
	Queries []struct {
		Namespace      string `json:"namespace"`
		Selector       string `json:"selector"`
		Throughput     string `json:"throughput"`
		ThroughputUnit string `json:"throughputUnit"`
		Backlog        string `json:"backlog"`
		BacklogUnit    string `json:"backlogUnit"`
	} `json:"queries"`
}

// LoadFile reads a config file; its values are the defaults that flags override.
func LoadFile(path string) (Config, error) {
	var c Config
	data, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("read metrics config: %w", err)
	}
	var f File
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return c, fmt.Errorf("read metrics config %q: %w", path, err)
	}
	p := f.Prometheus
	c.URL, c.BearerTokenFile, c.Username, c.PasswordFile = p.URL, p.BearerTokenFile, p.Username, p.PasswordFile
	c.TLS = TLS{CAFile: p.CAFile, CertFile: p.CertFile, KeyFile: p.KeyFile, ServerName: p.ServerName, InsecureSkipVerify: p.InsecureSkipVerify}
	for _, d := range []struct {
		name string
		raw  string
		into *time.Duration
	}{{"timeout", p.Timeout, &c.Timeout}, {"window", p.Window, &c.Window}, {"step", p.Step, &c.Step}} {
		if d.raw == "" {
			continue
		}
		v, err := time.ParseDuration(d.raw)
		if err != nil || v <= 0 {
			return c, fmt.Errorf("read metrics config %q: prometheus.%s %q is not a positive duration such as 30s", path, d.name, d.raw)
		}
		*d.into = v
	}
	for i, q := range f.Queries {
		sel, err := labels.Parse(q.Selector)
		if err != nil {
			return c, fmt.Errorf("read metrics config %q: queries[%d].selector: %w", path, i, err)
		}
		if q.Throughput == "" && q.Backlog == "" {
			return c, fmt.Errorf("read metrics config %q: queries[%d] has neither throughput nor backlog", path, i)
		}
		c.Rules = append(c.Rules, Rule{
			Namespace: q.Namespace, Selector: sel,
			Throughput: q.Throughput, ThroughputUnit: q.ThroughputUnit,
			Backlog: q.Backlog, BacklogUnit: q.BacklogUnit,
		})
	}
	return c, nil
}

// Validate rejects a config that cannot work before anything is read.
func (c *Config) Validate() error {
	if c.URL == "" {
		return errors.New("no Prometheus URL; set --prometheus or prometheus.url in the metrics config")
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("invalid Prometheus URL %q: want http://HOST:PORT or https://HOST:PORT", c.URL)
	}
	if u.User != nil {
		return fmt.Errorf("invalid Prometheus URL: put credentials in --prometheus-password-file or --prometheus-bearer-token-file, not in the URL")
	}
	if c.BearerTokenFile != "" && (c.Username != "" || c.PasswordFile != "") {
		return errors.New("a bearer token and basic auth cannot be used together")
	}
	if (c.Username == "") != (c.PasswordFile == "") {
		return errors.New("basic auth needs both a username and a password file")
	}
	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		return errors.New("a client certificate needs both a cert file and a key file")
	}
	if c.Timeout < 0 || c.Window < 0 || c.Step < 0 {
		return errors.New("the Prometheus timeout, window and step must be positive")
	}
	if d := c.withDefaults(); d.Window/d.Step > maxPoints {
		return fmt.Errorf("a window of %s at a step of %s is %d points per series; Prometheus answers at most %d: use a larger step", d.Window, d.Step, d.Window/d.Step, maxPoints)
	}
	return nil
}

// withDefaults fills the zero durations.
func (c Config) withDefaults() Config {
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.Step == 0 {
		c.Step = max(c.Window/defaultPoints, time.Second)
	}
	return c
}
