package controlplane

import (
	"context"
	"fmt"

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
	cs, err := kubernetes.NewForConfig(cp.AdminConfig())
	if err != nil {
		return nil, fmt.Errorf("admin client: %w", err)
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	if namespace == "" {
		_, err = cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules,
		}, metav1.CreateOptions{})
		if err == nil {
			_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: user},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
				Subjects:   subject,
			}, metav1.CreateOptions{})
		}
	} else {
		_, err = cs.RbacV1().Roles(namespace).Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules,
		}, metav1.CreateOptions{})
		if err == nil {
			_, err = cs.RbacV1().RoleBindings(namespace).Create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: user},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
				Subjects:   subject,
			}, metav1.CreateOptions{})
		}
	}
	if err != nil {
		return nil, fmt.Errorf("bind identity %s: %w", user, err)
	}
	return cp.identity(user, namespace)
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
