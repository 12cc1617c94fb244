package kubeletsim

import (
	"maps"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"
)

// MiB is a mebibyte, for Program.Memory.
const MiB = 1 << 20

// Image is a container image a registry serves.
type Image struct {
	// Size in bytes, as the Pulled event reports it; default 24 MiB.
	Size int64
	// PullTime, when set, is how long (simulated time) a successful pull takes; the container
	// waits in ContainerCreating meanwhile, as behind a slow registry. Zero pulls at once.
	PullTime time.Duration
	// Private images need an imagePullSecrets entry that names an existing Secret; without one the
	// pull fails with containerd's "pull access denied".
	Private bool
	// Program is what a container of this image does.
	Program Program
}

// Program is the simulated behaviour of a container's process. The zero value listens on
// nothing, needs nothing and runs forever: probes against it fail with connection refused.
type Program struct {
	// Ports it listens on (TCP) once StartupDelay has passed.
	Ports []int32
	// HealthPaths answer HTTP 200, or 503 while the upstream is unreachable; other paths answer
	// 404. Empty means every path answers like a health path.
	HealthPaths []string
	// UpstreamEnv names the environment variable holding the endpoint the program dials
	// ("host:port" or a URL); World.Reachable decides whether that works.
	UpstreamEnv string
	// RequiredEnv must be set and non-empty, else the program logs an error and exits 1 at start.
	RequiredEnv []string
	// Memory is the working set it grows to, in bytes; above the container's memory limit the
	// kernel kills it (OOMKilled, exit 137) after OOMAfter.
	Memory int64
	// OOMAfter is how long (simulated time) it runs before using Memory; default 5s.
	OOMAfter time.Duration
	// ExitAfter, when set, makes it exit with ExitCode after running that long (simulated time).
	ExitAfter time.Duration
	ExitCode  int32
	// StartupDelay passes (simulated time) before it listens.
	StartupDelay time.Duration
	// Logs are printed at start, one line each. $(VAR) expands to the container's environment,
	// $(POD_IP) to the pod IP.
	Logs []string
	// ProbeIgnoresUpstream makes its health paths answer 200 whatever the upstream (a probe
	// served from a thread of its own), while it still logs UpstreamErrorLog on each probe: a
	// copy that is Ready and does no work.
	ProbeIgnoresUpstream bool
	// UpstreamErrorLog is printed on every readiness probe while the upstream is unreachable;
	// $(UPSTREAM) is the endpoint, $(ERROR) the dial error. Default: a logfmt error line.
	UpstreamErrorLog string
	// ExitLogs are printed before a deliberate exit (ExitAfter), a missing RequiredEnv included.
	ExitLogs []string
}

// World is what the simulated nodes can see: which images the registries resolve, which
// registries answer, which endpoints outside the cluster accept connections, and what each image
// runs. Secrets and ConfigMaps are not part of it: the kubelet reads them from the API server.
// A World is safe for concurrent use and may change while the simulation runs; pods see the
// change at their next sync or probe.
type World struct {
	mu           sync.RWMutex
	images       map[string]Image
	registryDown map[string]bool
	reachable    map[string]bool
}

// NewWorld returns an empty world: no images, every registry up, no endpoint reachable.
func NewWorld() *World {
	return &World{images: map[string]Image{}, registryDown: map[string]bool{}, reachable: map[string]bool{}}
}

// SetImage makes the registry serve ref (as written in a pod spec) with this image.
func (w *World) SetImage(ref string, img Image) *World {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.images[ref] = img
	return w
}

// RemoveImage makes the registry answer "not found" for ref.
func (w *World) RemoveImage(ref string) *World {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.images, ref)
	return w
}

// SetProgram replaces what an image does; running containers change behaviour at once (probes,
// memory), restarted ones start with it.
func (w *World) SetProgram(ref string, p Program) *World {
	w.mu.Lock()
	defer w.mu.Unlock()
	img := w.images[ref]
	img.Program = p
	w.images[ref] = img
	return w
}

// SetRegistryDown makes every pull from host fail with a DNS error (down) or work again.
func (w *World) SetRegistryDown(host string, down bool) *World {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.registryDown[host] = down
	return w
}

// SetReachable decides whether connections to endpoint ("host:port") succeed.
func (w *World) SetReachable(endpoint string, ok bool) *World {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reachable[endpoint] = ok
	return w
}

// Reachable reports whether endpoint ("host:port", or a URL whose default port is implied by
// its scheme) accepts connections. Unknown endpoints do not.
func (w *World) Reachable(endpoint string) bool {
	hp := HostPort(endpoint)
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.reachable[hp]
}

func (w *World) image(ref string) (Image, bool) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	img, ok := w.images[ref]
	return img, ok
}

func (w *World) isRegistryDown(host string) bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.registryDown[host]
}

// Clone returns an independent copy (for a test that wants to vary one world).
func (w *World) Clone() *World {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return &World{images: maps.Clone(w.images), registryDown: maps.Clone(w.registryDown), reachable: maps.Clone(w.reachable)}
}

// HostPort reduces an endpoint to host:port: "https://a.example/v1" → "a.example:443",
// "a.example:8443" → itself, "postgres://u@db:5432/x" → "db:5432".
func HostPort(endpoint string) string {
	if strings.Contains(endpoint, "://") {
		u, err := url.Parse(endpoint)
		if err == nil {
			if u.Port() != "" {
				return u.Host
			}
			port := map[string]string{"http": "80", "https": "443", "grpc": "443", "ws": "80", "wss": "443"}[u.Scheme]
			if port == "" {
				return u.Hostname()
			}
			return net.JoinHostPort(u.Hostname(), port)
		}
	}
	if i := strings.IndexByte(endpoint, '/'); i >= 0 {
		endpoint = endpoint[:i]
	}
	return endpoint
}
