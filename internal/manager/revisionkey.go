package manager

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// DefaultRevisionKeySecret is the Secret, in rudder's own namespace, holding
// the key rudder signs its release revisions with (helm.LabelSignature).
const DefaultRevisionKeySecret = "rudder-revision-key"

// revisionKeyData is the key of the Secret's data holding the key.
const revisionKeyData = "key"

// revisionKey returns the revision signing key kept in Secret ns/name,
// creating the Secret with 32 random bytes when it does not exist. Every
// manager (shards, standbys) reads the same Secret, so each can tell the
// revisions the others wrote; deleting it makes every existing revision
// unsigned until the next upgrade of its release.
func revisionKey(ctx context.Context, cs kubernetes.Interface, ns, name string) ([]byte, error) {
	secrets := cs.CoreV1().Secrets(ns)
	for range 2 {
		s, err := secrets.Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			key := s.Data[revisionKeyData]
			if len(key) < 32 {
				return nil, fmt.Errorf("secret %s/%s: key %q holds %d bytes, fewer than 32; delete the Secret to have rudder make a new key", ns, name, revisionKeyData, len(key))
			}
			return key, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading the revision key, secret %s/%s: %w", ns, name, err)
		}
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		_, err = secrets.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app.kubernetes.io/managed-by": "rudder"}},
			Type:       corev1.SecretTypeOpaque,
			Data:       map[string][]byte{revisionKeyData: key},
		}, metav1.CreateOptions{})
		if err == nil {
			return key, nil
		}
		if !apierrors.IsAlreadyExists(err) { // another manager made it first: read it
			return nil, fmt.Errorf("creating the revision key, secret %s/%s: %w", ns, name, err)
		}
	}
	return nil, fmt.Errorf("reading the revision key, secret %s/%s: made and gone again", ns, name)
}

// revisionKeySecret returns the namespace and name of the revision key's
// Secret: opts.RevisionKeySecret ("namespace/name", or a name in rudder's
// namespace), else DefaultRevisionKeySecret in rudder's namespace.
func revisionKeySecret(opts Options) (ns, name string, err error) {
	v := opts.RevisionKeySecret
	if v == "" {
		return leaseNamespace(opts), DefaultRevisionKeySecret, nil
	}
	ns, name, ok := strings.Cut(v, "/")
	if !ok {
		ns, name = leaseNamespace(opts), v
	}
	if ns == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("--revision-key-secret %q: want NAMESPACE/NAME or NAME (in rudder's namespace)", v)
	}
	return ns, name, nil
}
