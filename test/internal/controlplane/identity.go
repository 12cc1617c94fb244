package controlplane

import (
	"context"
	"fmt"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Identity is a token user with the permissions one Role (or ClusterRole) grants.
type Identity struct {
	// User is the authenticated user name, as the audit log records it.
	User string
	// Kubeconfig is a kubeconfig file for this user whose context defaults to the Role's namespace.
	Kubeconfig string
	// Config authenticates as this user.
	Config *rest.Config
}

// CreateIdentity takes an unused token identity and binds it to a new Role in namespace with the
// given rules. With namespace "" it binds a ClusterRole instead (cluster-wide reads such as nodes).
func (cp *ControlPlane) CreateIdentity(ctx context.Context, namespace string, rules []rbacv1.PolicyRule) (*Identity, error) {
	user, err := cp.takeUser()
	if err != nil {
		return nil, err
	}
	if err := cp.Grant(ctx, user, namespace, rules); err != nil {
		return nil, err
	}
	return cp.identity(user, namespace)
}

// Grant gives user more permissions: a new Role and RoleBinding in namespace, or with namespace
// "" a ClusterRole and ClusterRoleBinding (e.g. nodes for an identity that also holds a Role).
func (cp *ControlPlane) Grant(ctx context.Context, user, namespace string, rules []rbacv1.PolicyRule) error {
	cs, err := kubernetes.NewForConfig(cp.AdminConfig())
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	meta := metav1.ObjectMeta{GenerateName: user + "-"}
	if namespace == "" {
		var role *rbacv1.ClusterRole
		role, err = cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: meta, Rules: rules}, metav1.CreateOptions{})
		if err == nil {
			_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: role.Name},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
				Subjects:   subject,
			}, metav1.CreateOptions{})
		}
	} else {
		var role *rbacv1.Role
		role, err = cs.RbacV1().Roles(namespace).Create(ctx, &rbacv1.Role{ObjectMeta: meta, Rules: rules}, metav1.CreateOptions{})
		if err == nil {
			_, err = cs.RbacV1().RoleBindings(namespace).Create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: role.Name},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
				Subjects:   subject,
			}, metav1.CreateOptions{})
		}
	}
	if err != nil {
		return fmt.Errorf("grant %s: %w", user, err)
	}
	return waitAllowed(ctx, cs, user, namespace, rules)
}

// waitAllowed polls a SubjectAccessReview until the RBAC authorizer's cache has the new
// binding, so the caller's next request is not refused by a stale cache.
func waitAllowed(ctx context.Context, cs kubernetes.Interface, user, namespace string, rules []rbacv1.PolicyRule) error {
	if len(rules) == 0 || len(rules[0].Verbs) == 0 || len(rules[0].Resources) == 0 {
		return nil
	}
	r := rules[0]
	group := ""
	if len(r.APIGroups) > 0 && r.APIGroups[0] != "*" {
		group = r.APIGroups[0]
	}
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: namespace, Verb: r.Verbs[0], Group: group, Resource: r.Resources[0],
		},
	}}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		res, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err == nil && res.Status.Allowed {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("grant %s: RBAC does not allow %s %s yet: %w", user, r.Verbs[0], r.Resources[0], ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// UserIdentity returns a named identity from Options.Users (or any token user) as it is, without
// creating bindings.
func (cp *ControlPlane) UserIdentity(user, namespace string) (*Identity, error) {
	return cp.identity(user, namespace)
}

func (cp *ControlPlane) identity(user, namespace string) (*Identity, error) {
	cfg, err := cp.ConfigFor(user)
	if err != nil {
		return nil, err
	}
	ns := namespace
	if ns == "" {
		ns = "default"
	}
	path := cp.path(user + ".kubeconfig")
	if err := cp.WriteKubeconfig(path, user, ns); err != nil {
		return nil, err
	}
	return &Identity{User: user, Kubeconfig: path, Config: cfg}, nil
}

// ReadOnlyRules grants get, list and watch on the given resources of the given API groups.
func ReadOnlyRules(groups []string, resources ...string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{{APIGroups: groups, Resources: resources, Verbs: []string{"get", "list", "watch"}}}
}
