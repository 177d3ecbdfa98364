package guide

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// playDeploymentController stands in for kube-controller-manager and the
// kubelets, which envtest lacks: until ctx is done, it reports every
// Deployment's pods as created and ready, as a cluster with room for them would.
func playDeploymentController(ctx context.Context, c client.Client) {
	for ctx.Err() == nil {
		var list appsv1.DeploymentList
		if err := c.List(ctx, &list); err == nil {
			for i := range list.Items {
				markReady(ctx, c, &list.Items[i])
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// markReady writes the status of a Deployment whose every replica is ready,
// unless it already says so.
func markReady(ctx context.Context, c client.Client, dep *appsv1.Deployment) {
	replicas := int32(1)
	if dep.Spec.Replicas != nil {
		replicas = *dep.Spec.Replicas
	}
	if dep.Status.ObservedGeneration == dep.Generation && dep.Status.ReadyReplicas == replicas {
		return
	}
	dep.Status = appsv1.DeploymentStatus{
		ObservedGeneration: dep.Generation, Replicas: replicas, UpdatedReplicas: replicas,
		ReadyReplicas: replicas, AvailableReplicas: replicas,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
		},
	}
	_ = c.Status().Update(ctx, dep) // a conflict is retried on the next round
}
