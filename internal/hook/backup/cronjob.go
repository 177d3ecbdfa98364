package backup

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// LabelBackupOf marks the CronJob, the Jobs and the volume of a Database's
// backups with the Database's name.
const LabelBackupOf = "rudder.dev/backup-of"

// mountPath is where the backup volume is mounted in a backup Job.
const mountPath = "/backups"

// spec is what the hook needs of a Database to build its backup objects.
type spec struct {
	name, namespace string
	version         string
	database        string
	storageClass    string
	secretName      string
	usernameKey     string
	passwordKey     string
	schedule        string
	storageSize     resource.Quantity
	retention       int64
}

func (s spec) objectName() string { return s.name + "-backup" }

func (s spec) labels() map[string]string {
	return map[string]string{
		"app":                          s.name,
		"app.kubernetes.io/instance":   s.name,
		"app.kubernetes.io/component":  "backup",
		"app.kubernetes.io/managed-by": "rudder",
		LabelBackupOf:                  s.name,
	}
}

// volumeClaim is the backup volume. It has no owner: it outlives the Database
// unless the deletion policy says Delete.
func (s spec) volumeClaim() *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: s.objectName(), Namespace: s.namespace, Labels: s.labels()},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: s.storageSize}},
		},
	}
	if s.storageClass != "" {
		pvc.Spec.StorageClassName = ptr.To(s.storageClass)
	}
	return pvc
}

// cronJobSpec is the wanted spec of the backup CronJob: never two backups at
// once, a missed run started late only within five minutes, and a Job of the
// backup script in the restricted security profile.
func (s spec) cronJobSpec() batchv1.CronJobSpec {
	return batchv1.CronJobSpec{
		Schedule:                   s.schedule,
		ConcurrencyPolicy:          batchv1.ForbidConcurrent,
		StartingDeadlineSeconds:    ptr.To[int64](300),
		SuccessfulJobsHistoryLimit: ptr.To[int32](3),
		FailedJobsHistoryLimit:     ptr.To[int32](3),
		JobTemplate: batchv1.JobTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: s.labels()},
			Spec:       s.jobSpec(),
		},
	}
}

// jobSpec is the spec of one backup Job.
func (s spec) jobSpec() batchv1.JobSpec {
	return s.scriptJob("backup", Script(), s.objectName(), false,
		corev1.EnvVar{Name: EnvPrefix, Value: s.name},
		corev1.EnvVar{Name: EnvRetention, Value: fmt.Sprint(s.retention)},
		corev1.EnvVar{Name: EnvReportFile, Value: corev1.TerminationMessagePathDefault},
	)
}

// scriptJob is a Job that runs script (Script or RestoreScript) once against
// the Database's server, with its credentials from the Secret, the backup
// volume claim mounted at mountPath and the restricted security profile.
func (s spec) scriptJob(container, script, claim string, readOnly bool, env ...corev1.EnvVar) batchv1.JobSpec {
	secretEnv := func(name, key string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: s.secretName}, Key: key}}}
	}
	return batchv1.JobSpec{
		BackoffLimit:          ptr.To[int32](2),
		ActiveDeadlineSeconds: ptr.To[int64](3600),
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: s.labels()},
			Spec: corev1.PodSpec{
				RestartPolicy:      corev1.RestartPolicyNever,
				EnableServiceLinks: ptr.To(false),
				SecurityContext: &corev1.PodSecurityContext{
					RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](999), RunAsGroup: ptr.To[int64](999),
					FSGroup:        ptr.To[int64](999),
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				},
				Containers: []corev1.Container{{
					Name:    container,
					Image:   "postgres:" + s.version,
					Command: []string{"/bin/sh", "-c", script},
					Env: append([]corev1.EnvVar{
						{Name: EnvHost, Value: s.name},
						{Name: EnvPort, Value: "5432"},
						secretEnv(EnvUser, s.usernameKey),
						secretEnv(EnvPassword, s.passwordKey),
						{Name: EnvDatabase, Value: s.database},
						{Name: EnvDir, Value: mountPath},
					}, env...),
					VolumeMounts: []corev1.VolumeMount{
						{Name: "backups", MountPath: mountPath, ReadOnly: readOnly},
						{Name: "tmp", MountPath: "/tmp"},
					},
					SecurityContext: &corev1.SecurityContext{
						AllowPrivilegeEscalation: ptr.To(false),
						ReadOnlyRootFilesystem:   ptr.To(true),
						Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					},
				}},
				Volumes: []corev1.Volume{
					{Name: "backups", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
						ClaimName: claim, ReadOnly: readOnly}}},
					{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				},
			},
		},
	}
}
