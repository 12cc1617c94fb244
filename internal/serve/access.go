package serve

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
)

// Reviewer decides who may read /report, with the authentication and authorization the cluster
// already has, as kube-rbac-proxy does in front of kube-state-metrics: the caller's bearer
// token is checked with a TokenReview, and what it may read with SubjectAccessReviews. A
// caller reads the report of a namespace when it may list pods and get pods/log there: the
// report is made of the pods' specs, statuses and log lines, so serve shows no one more than
// the API server would show them (and shows it redacted).
//
// TokenReviews and SubjectAccessReviews are "create" requests that the API server answers and
// stores nothing of; they are the only requests serve makes that are not get, list or watch.
// Its ServiceAccount needs system:auth-delegator for them (deploy/).
type Reviewer struct {
	Tokens authenticationclient.TokenReviewInterface
	Access authorizationclient.SubjectAccessReviewInterface
	// TTL is how long an answer is kept: a token's review, a user's right in a namespace.
	// Zero means DefaultReviewTTL.
	TTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu     sync.Mutex
	users  map[[32]byte]reviewed[*authenticationv1.UserInfo]
	rights map[rightKey]reviewed[bool]
}

// DefaultReviewTTL is how long a review's answer stands: a revoked token or a removed
// RoleBinding reads the report for at most this long afterwards, as with kube-rbac-proxy's
// caches.
const DefaultReviewTTL = time.Minute

// maxReviewed bounds each cache: past it the cache starts afresh, so callers with ever new
// tokens cost API requests, never memory.
const maxReviewed = 4096

// maxParallelReviews bounds the SubjectAccessReviews one request has in flight.
const maxParallelReviews = 8

type reviewed[T any] struct {
	v  T
	at time.Time
}

// rightKey is one user's right in one namespace ("" for every namespace).
type rightKey struct {
	user, namespace string
}

// ErrUnauthenticated says the caller's token is missing or the API server did not accept it.
var ErrUnauthenticated = errors.New("unauthenticated")

// Grant is what a caller may read of the report.
type Grant struct {
	// User is the caller's name as the API server authenticated it.
	User string
	// All says the caller may read every namespace; else Namespaces lists those it may.
	All        bool
	Namespaces map[string]bool
}

// Review authenticates token and says which of namespaces its user may read.
func (v *Reviewer) Review(ctx context.Context, token string, namespaces []string) (Grant, error) {
	if token == "" {
		return Grant{}, fmt.Errorf("%w: no bearer token", ErrUnauthenticated)
	}
	user, err := v.authenticate(ctx, token)
	if err != nil {
		return Grant{}, err
	}
	g := Grant{User: user.Username}
	if g.All, err = v.may(ctx, user, ""); err != nil || g.All {
		return g, err
	}
	g.Namespaces = map[string]bool{}
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
		slots = make(chan struct{}, maxParallelReviews)
	)
	for _, ns := range namespaces {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			ok, err := v.may(ctx, user, ns)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && first == nil {
				first = err
			}
			if ok {
				g.Namespaces[ns] = true
			}
		}()
	}
	wg.Wait()
	return g, first
}

func (v *Reviewer) ttl() time.Duration {
	if v.TTL > 0 {
		return v.TTL
	}
	return DefaultReviewTTL
}

func (v *Reviewer) now() time.Time {
	if v.Now != nil {
		return v.Now()
	}
	return time.Now()
}

// authenticate returns the user a TokenReview says token belongs to. Tokens are kept by their
// SHA-256, never as they are.
func (v *Reviewer) authenticate(ctx context.Context, token string) (*authenticationv1.UserInfo, error) {
	key := sha256.Sum256([]byte(token))
	v.mu.Lock()
	if r, ok := v.users[key]; ok && v.now().Sub(r.at) < v.ttl() {
		v.mu.Unlock()
		if r.v == nil {
			return nil, fmt.Errorf("%w: the API server did not accept the token", ErrUnauthenticated)
		}
		return r.v, nil
	}
	v.mu.Unlock()
	res, err := v.Tokens.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("review the caller's token: %w", err)
	}
	var user *authenticationv1.UserInfo
	if res.Status.Authenticated {
		user = &res.Status.User
	}
	v.mu.Lock()
	if v.users == nil || len(v.users) >= maxReviewed {
		v.users = map[[32]byte]reviewed[*authenticationv1.UserInfo]{}
	}
	v.users[key] = reviewed[*authenticationv1.UserInfo]{user, v.now()}
	v.mu.Unlock()
	if user == nil {
		return nil, fmt.Errorf("%w: the API server did not accept the token", ErrUnauthenticated)
	}
	return user, nil
}

// may says whether user may list pods and get their logs in namespace ("" for all).
func (v *Reviewer) may(ctx context.Context, user *authenticationv1.UserInfo, namespace string) (bool, error) {
	key := rightKey{user: userKey(user), namespace: namespace}
	v.mu.Lock()
	if r, ok := v.rights[key]; ok && v.now().Sub(r.at) < v.ttl() {
		v.mu.Unlock()
		return r.v, nil
	}
	v.mu.Unlock()
	ok := true
	for _, attrs := range readAttributes(namespace) {
		allowed, err := v.allowed(ctx, user, attrs)
		if err != nil {
			return false, err
		}
		if !allowed {
			ok = false
			break
		}
	}
	v.mu.Lock()
	if v.rights == nil || len(v.rights) >= maxReviewed {
		v.rights = map[rightKey]reviewed[bool]{}
	}
	v.rights[key] = reviewed[bool]{ok, v.now()}
	v.mu.Unlock()
	return ok, nil
}

// readAttributes are the rights that reading a namespace's report takes: what the report is
// made of.
func readAttributes(namespace string) []*authorizationv1.ResourceAttributes {
	return []*authorizationv1.ResourceAttributes{
		{Namespace: namespace, Verb: "list", Resource: "pods"},
		{Namespace: namespace, Verb: "get", Resource: "pods", Subresource: "log"},
	}
}

func (v *Reviewer) allowed(ctx context.Context, user *authenticationv1.UserInfo, attrs *authorizationv1.ResourceAttributes) (bool, error) {
	extra := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
	for k, val := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(val)
	}
	res, err := v.Access.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extra, ResourceAttributes: attrs,
	}}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("review the caller's access: %w", err)
	}
	return res.Status.Allowed, nil
}

// userKey tells users apart for the rights cache: everything of the user a review reads (name,
// UID, groups, extra).
func userKey(u *authenticationv1.UserInfo) string {
	h := sha256.New()
	write := func(s string) {
		_, _ = h.Write([]byte(s)) // a hash.Hash never fails to write
		_, _ = h.Write([]byte{0})
	}
	write(u.Username)
	write(u.UID)
	for _, g := range u.Groups {
		write(g)
	}
	for _, k := range slices.Sorted(maps.Keys(u.Extra)) {
		write(k)
		for _, x := range u.Extra[k] {
			write(x)
		}
	}
	return string(h.Sum(nil))
}
