package preflight

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// metadataAccept asks for an object's metadata alone, with no fallback: client-go's metadata
// client also accepts the full object (plain application/json), which a server that cannot
// convert would send, Secret data included. With this header it answers 406 instead.
const metadataAccept = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"

// MetadataUserAgent ends the user agent of the metadata lookups, so the API server's audit log
// shows which requests of the tool touched ConfigMaps and Secrets, and that they took metadata.
const MetadataUserAgent = "(preflight --check-references, metadata only)"

// MetadataReader looks core/v1 objects up by metadata only.
type MetadataReader interface {
	// Get returns nil when the object exists and the API server's NotFound error when not.
	Get(ctx context.Context, resource, namespace, name string) error
}

// NewMetadataReader returns a MetadataReader on cfg's server.
func NewMetadataReader(cfg *rest.Config) (MetadataReader, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &schema.GroupVersion{Version: "v1"}
	c.APIPath = "/api"
	c.ContentType = "application/json"
	c.AcceptContentTypes = metadataAccept
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	c.UserAgent = strings.TrimSpace(c.UserAgent + " " + MetadataUserAgent)
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("build the metadata client for %s: %w", cfg.Host, err)
	}
	return &metadataReader{rc: rc}, nil
}

type metadataReader struct{ rc rest.Interface }

func (m *metadataReader) Get(ctx context.Context, resource, namespace, name string) error {
	body, err := m.rc.Get().Namespace(namespace).Resource(resource).Name(name).
		SetHeader("Accept", metadataAccept).Do(ctx).Raw()
	if err != nil {
		// The client decodes an error Status only in the types it accepts; read it here.
		var st metav1.Status
		if !apierrors.IsNotFound(err) && json.Unmarshal(body, &st) == nil && st.Kind == "Status" && st.Code > 0 {
			return &apierrors.StatusError{ErrStatus: st}
		}
		return err
	}
	var meta metav1.PartialObjectMetadata
	if err := json.Unmarshal(body, &meta); err != nil {
		return fmt.Errorf("decode the metadata of %s %s/%s: %w", resource, namespace, name, err)
	}
	if meta.Kind != "PartialObjectMetadata" {
		return fmt.Errorf("the server answered %s %s/%s with a %q, not its metadata alone", resource, namespace, name, meta.Kind)
	}
	return nil
}
