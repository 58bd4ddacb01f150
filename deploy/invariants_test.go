package deploy

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/sealbox"
)

// want is what a set of objects must deploy.
type want struct {
	replicas int32
	// secret is the Secret the gateway's keys and token come from;
	// secretInSet when it is one of the objects (else it exists already).
	secret      string
	secretInSet bool
	// realKeys: the Secret's session keys are keys (not placeholders);
	// sessionKeys of them (0: one, generated).
	realKeys    bool
	sessionKeys int
	// The Secret and key of MCPHOST_REDIS_PASSWORD (key "" is redis-password).
	redisSecret, redisKey string
	pdb                   bool
	tls                   bool // rediss://, with the TLS files mounted
	tlsFiles              int  // of ca_file, cert_file and key_file
	devRedis              bool // the single Redis is in the set
	helm                  bool // rolls on config changes (checksum/config)
	netpol                bool // NetworkPolicies around the gateway (and the single Redis)
	egress                bool // the gateway's NetworkPolicy restricts egress too
}

// The gateway's environment that the checks rely on.
const (
	envToken       = "MCPHOST_SERVE_TOKEN"
	envSessionKeys = sealbox.EnvSessionKeys
	envRedisPass   = "MCPHOST_REDIS_PASSWORD"
)

func objectsOf[T any](objs []manifest) []T {
	var out []T
	for _, m := range objs {
		if o, ok := m.obj.(T); ok {
			out = append(out, o)
		}
	}
	return out
}

func isGateway(d *appsv1.Deployment) bool {
	return d.Spec.Template.Labels["app.kubernetes.io/component"] == "gateway"
}

// gateway returns the one Deployment of the gateway.
func gateway(t *testing.T, objs []manifest) *appsv1.Deployment {
	t.Helper()
	var gw []*appsv1.Deployment
	for _, d := range objectsOf[*appsv1.Deployment](objs) {
		if isGateway(d) {
			gw = append(gw, d)
		}
	}
	if len(gw) != 1 {
		t.Fatalf("%d gateway Deployments (app.kubernetes.io/component: gateway); want 1", len(gw))
	}
	return gw[0]
}

// checkSet checks the objects of one deployment of the gateway.
func checkSet(t *testing.T, objs []manifest, w want) {
	t.Helper()
	names := map[string]string{}
	for _, m := range objs {
		key := m.typ + "/" + m.obj.GetName()
		switch {
		case m.obj.GetName() == "":
			t.Errorf("%s: no name", m.source)
		case m.obj.GetNamespace() != "":
			t.Errorf("%s: namespace %q; the namespace is the operator's choice", m.source, m.obj.GetNamespace())
		case names[key] != "":
			t.Errorf("%s: %s again (first in %s)", m.source, key, names[key])
		}
		names[key] = m.source
	}
	for _, d := range objectsOf[*appsv1.Deployment](objs) {
		checkPodBasics(t, d)
	}
	d := gateway(t, objs)
	pod := &d.Spec.Template.Spec
	c := &pod.Containers[0]
	podLabels := labels.Set(d.Spec.Template.Labels)

	// Replicas, rolled one at a time without going below their number.
	if d.Spec.Replicas == nil || *d.Spec.Replicas != w.replicas {
		t.Errorf("replicas: %v; want %d", d.Spec.Replicas, w.replicas)
	}
	if s := d.Spec.Strategy; s.Type != appsv1.RollingUpdateDeploymentStrategyType || s.RollingUpdate == nil ||
		s.RollingUpdate.MaxUnavailable == nil || s.RollingUpdate.MaxUnavailable.IntValue() != 0 {
		t.Errorf("strategy: %+v; want RollingUpdate with maxUnavailable 0", s)
	}
	if a := pod.Affinity; a == nil || a.PodAntiAffinity == nil || len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
		t.Error("no preferred podAntiAffinity: the replicas may share a node")
	} else {
		sel := a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.LabelSelector
		if !selects(t, sel.MatchLabels, podLabels) {
			t.Errorf("podAntiAffinity selects %v, not the gateway's pods %v", sel.MatchLabels, podLabels)
		}
	}
	if pod.EnableServiceLinks == nil || *pod.EnableServiceLinks {
		t.Error("enableServiceLinks is not false: a Service named mcphost would set MCPHOST_PORT… in the gateway's environment")
	}
	if w.helm {
		if d.Spec.Template.Annotations["checksum/config"] == "" {
			t.Error("no checksum/config annotation: a config change would not roll the pods")
		}
	}

	// serve --http on the container's port, with the ConfigMap's file.
	port := containerPort(t, c, "http")
	args := c.Args
	if len(args) == 0 || args[0] != "serve" || flag(args, "--http") != "0.0.0.0:"+itoa(port) || !slices.Contains(args, "--allow-non-loopback") {
		t.Errorf("args %v: want serve --http 0.0.0.0:%d --allow-non-loopback", args, port)
	}
	if len(c.Command) != 0 {
		t.Errorf("command %v: the image's ENTRYPOINT (mcphost) must stay", c.Command)
	}
	configPath := flag(args, "--config")
	mount, vol := mountOf(t, c, pod, configPath)
	if mount == nil || vol.ConfigMap == nil || !mount.ReadOnly {
		t.Fatalf("--config %s: want it on a read-only ConfigMap volume", configPath)
	}
	if mount.SubPath != "" {
		t.Errorf("the ConfigMap is mounted with subPath: Kubernetes never updates such a file")
	}

	// Probes.
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"livenessProbe", c.LivenessProbe, "/healthz"}, {"readinessProbe", c.ReadinessProbe, "/readyz"}, {"startupProbe", c.StartupProbe, "/healthz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("%s: want GET %s", p.name, p.path)
			continue
		}
		g := p.probe.HTTPGet
		if g.Path != p.path || portOf(t, c, g.Port) != port {
			t.Errorf("%s: GET %s on port %s; want GET %s on %d", p.name, g.Path, g.Port.String(), p.path, port)
		}
	}

	// The environment: keys, token and Redis password from Secrets, the
	// pod's address from the Downward API.
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		if _, dup := env[e.Name]; dup {
			t.Errorf("env %s twice", e.Name)
		}
		env[e.Name] = e
	}
	if e := env["POD_IP"]; e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "status.podIP" {
		t.Errorf("POD_IP: %+v; want the Downward API's status.podIP", e)
	}
	redisKey := w.redisKey
	if redisKey == "" {
		redisKey = "redis-password"
	}
	secretKeys := map[string][]string{} // Secret → keys the gateway reads
	for _, v := range []struct{ env, secret, key string }{
		{envToken, w.secret, "serve-token"},
		{envSessionKeys, w.secret, "session-keys"},
		{envRedisPass, w.redisSecret, redisKey},
	} {
		e := env[v.env]
		if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			t.Errorf("%s: %+v; want it from a Secret", v.env, e)
			continue
		}
		ref := e.ValueFrom.SecretKeyRef
		if ref.Name != v.secret || ref.Key != v.key || (ref.Optional != nil && *ref.Optional) {
			t.Errorf("%s: from Secret %s key %s (optional %v); want %s key %s, not optional", v.env, ref.Name, ref.Key, ref.Optional, v.secret, v.key)
		}
		secretKeys[ref.Name] = append(secretKeys[ref.Name], ref.Key)
	}
	var secrets []*corev1.Secret
	for _, s := range objectsOf[*corev1.Secret](objs) {
		if _, used := secretKeys[s.Name]; used {
			secrets = append(secrets, s)
		}
	}
	if w.secretInSet != (len(secrets) == 1) || len(secrets) > 1 {
		t.Errorf("%d Secret(s) the gateway reads in the set; want it: %v", len(secrets), w.secretInSet)
	}
	for _, s := range secrets {
		for _, k := range secretKeys[s.Name] {
			if _, ok := secretValue(s, k); !ok {
				t.Errorf("Secret %s has no key %s", s.Name, k)
			}
		}
		if keys, ok := secretValue(s, "session-keys"); ok && w.realKeys {
			if _, err := sealbox.Parse(keys); err != nil {
				t.Errorf("Secret %s: session-keys: %v", s.Name, err)
			}
			if n := len(strings.Split(keys, ",")); n != max(w.sessionKeys, 1) {
				t.Errorf("Secret %s: %d session key(s); want %d", s.Name, n, max(w.sessionKeys, 1))
			}
		}
	}

	// The ServiceAccount: no API token.
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Error("automountServiceAccountToken is not false: the gateway needs no Kubernetes API token")
	}
	if sa := pod.ServiceAccountName; sa != "" && sa != "default" {
		found := false
		for _, s := range objectsOf[*corev1.ServiceAccount](objs) {
			if s.Name == sa {
				found = true
				if s.AutomountServiceAccountToken == nil || *s.AutomountServiceAccountToken {
					t.Errorf("ServiceAccount %s: automountServiceAccountToken is not false", sa)
				}
			}
		}
		if !found {
			t.Errorf("serviceAccountName %s: not in the set", sa)
		}
	}

	// Draining: the grace period covers the preStop pause and drain_timeout.
	var pause time.Duration
	if l := c.Lifecycle; l != nil && l.PreStop != nil && l.PreStop.Sleep != nil {
		pause = time.Duration(l.PreStop.Sleep.Seconds) * time.Second
	}

	// The Service: selects the gateway's pods (and nothing else), on the
	// http port, without affinity.
	var svcs []*corev1.Service
	for _, s := range objectsOf[*corev1.Service](objs) {
		if selects(t, s.Spec.Selector, podLabels) {
			svcs = append(svcs, s)
		}
	}
	if len(svcs) != 1 {
		t.Fatalf("%d Services select the gateway's pods; want 1", len(svcs))
	}
	svc := svcs[0]
	if svc.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("Service %s: type %s; want ClusterIP", svc.Name, svc.Spec.Type)
	}
	if a := svc.Spec.SessionAffinity; a != "" && a != corev1.ServiceAffinityNone {
		t.Errorf("Service %s: sessionAffinity %s; replicas share their sessions and need none", svc.Name, a)
	}
	if len(svc.Spec.Ports) != 1 || portOf(t, c, svc.Spec.Ports[0].TargetPort) != port || svc.Spec.Ports[0].Port != 80 {
		t.Errorf("Service %s: ports %+v; want 80 → the container's %d", svc.Name, svc.Spec.Ports, port)
	}

	// The PodDisruptionBudget: over the gateway's pods, letting one go at a
	// time and keeping at least one.
	pdbs := objectsOf[*policyv1.PodDisruptionBudget](objs)
	switch {
	case !w.pdb && len(pdbs) != 0:
		t.Errorf("%d PodDisruptionBudget(s); want none", len(pdbs))
	case w.pdb && len(pdbs) != 1:
		t.Errorf("%d PodDisruptionBudget(s); want 1", len(pdbs))
	case w.pdb:
		p := pdbs[0]
		if p.Spec.Selector == nil || len(p.Spec.Selector.MatchExpressions) != 0 || !selects(t, p.Spec.Selector.MatchLabels, podLabels) {
			t.Errorf("PodDisruptionBudget %s: selector %v does not select the gateway's pods %v", p.Name, p.Spec.Selector, podLabels)
		}
		switch {
		case p.Spec.MinAvailable != nil && p.Spec.MaxUnavailable != nil:
			t.Errorf("PodDisruptionBudget %s: both minAvailable and maxUnavailable", p.Name)
		case p.Spec.MinAvailable != nil:
			if n := p.Spec.MinAvailable.IntValue(); p.Spec.MinAvailable.Type != intstr.Int || n < 1 || n >= int(w.replicas) {
				t.Errorf("PodDisruptionBudget %s: minAvailable %s with %d replicas", p.Name, p.Spec.MinAvailable.String(), w.replicas)
			}
		case p.Spec.MaxUnavailable != nil:
			if n := p.Spec.MaxUnavailable.IntValue(); p.Spec.MaxUnavailable.Type != intstr.Int || n < 1 || n >= int(w.replicas) {
				t.Errorf("PodDisruptionBudget %s: maxUnavailable %s with %d replicas", p.Name, p.Spec.MaxUnavailable.String(), w.replicas)
			}
		default:
			t.Errorf("PodDisruptionBudget %s: neither minAvailable nor maxUnavailable", p.Name)
		}
	}

	// The configuration: in the ConfigMap, loaded by mcphost's own loader in
	// the pod's environment, with a state block on Redis.
	var cm *corev1.ConfigMap
	for _, m := range objectsOf[*corev1.ConfigMap](objs) {
		if m.Name == vol.ConfigMap.Name {
			cm = m
		}
	}
	if cm == nil {
		t.Fatalf("ConfigMap %s (volume %s): not in the set", vol.ConfigMap.Name, vol.Name)
	}
	file := path.Base(configPath)
	hclText, ok := cm.Data[file]
	if !ok || path.Dir(configPath) != mount.MountPath {
		t.Fatalf("--config %s: ConfigMap %s mounted at %s has no key %s", configPath, cm.Name, mount.MountPath, file)
	}
	podEnv := podEnvironment(t, c)
	state := checkStateBlock(t, configPath, hclText, podEnv)
	cfg := loadConfig(t, configPath, hclText, podEnv)
	if grace := pod.TerminationGracePeriodSeconds; grace == nil || time.Duration(*grace)*time.Second < cfg.Settings.DrainTimeout+pause+5*time.Second {
		t.Errorf("terminationGracePeriodSeconds %d: want at least drain_timeout (%s) + preStop (%s) + 5s to stop the servers", ptrOr(grace), cfg.Settings.DrainTimeout, pause)
	}

	// Redis: the URL's scheme, the TLS files on a mounted Secret, and the
	// single Redis when it is in the set.
	if got := state.url.Scheme == "rediss"; got != w.tls {
		t.Errorf("state url %s: TLS %v; want %v", state.url.Redacted(), got, w.tls)
	}
	for attr, p := range state.files {
		m, v := mountOf(t, c, pod, p)
		// (A CA, which is public, may be on a ConfigMap.)
		if m == nil || !(v.Secret != nil || attr == "ca_file" && v.ConfigMap != nil) || !m.ReadOnly {
			t.Errorf("state %s = %s: not on a read-only Secret volume", attr, p)
		}
	}
	if len(state.files) != w.tlsFiles {
		t.Errorf("state block: %d of ca_file, cert_file, key_file; want %d", len(state.files), w.tlsFiles)
	}
	checkRedis(t, objs, state, w)
	checkNetworkPolicies(t, objs, d, port, state, w)

	// What the gateway writes is on emptyDirs (the root filesystem is
	// read-only): the image's TMPDIR, cache and config directory.
	for _, k := range []string{"TMPDIR", "XDG_CACHE_HOME", "MCPHOST_CONFIG_DIR"} {
		p := podEnv[k]
		m, v := mountOf(t, c, pod, p)
		if p == "" || m == nil || v.EmptyDir == nil || m.ReadOnly {
			t.Errorf("%s=%q: not on a writable emptyDir", k, p)
		}
	}
}

// checkPodBasics checks what every Deployment of the set needs: a
// selector that selects its pods, tagged images, resources, probes and a
// locked-down security context.
func checkPodBasics(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	if d.Spec.Selector == nil || !selects(t, d.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
		t.Errorf("Deployment %s: selector does not select its own pods", d.Name)
	}
	pod := &d.Spec.Template.Spec
	if len(pod.Containers) != 1 || len(pod.InitContainers) != 0 {
		t.Fatalf("Deployment %s: %d containers, %d init containers; want one container", d.Name, len(pod.Containers), len(pod.InitContainers))
	}
	c := &pod.Containers[0]
	ref := c.Image[strings.LastIndex(c.Image, "/")+1:]
	if _, tag, _ := strings.Cut(ref, ":"); tag == "" || tag == "latest" {
		t.Errorf("Deployment %s: image %s: want a tag other than latest", d.Name, c.Image)
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := c.Resources.Requests[r]; !ok || q.IsZero() {
			t.Errorf("Deployment %s: no %s request", d.Name, r)
		}
	}
	if q, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok || q.IsZero() {
		t.Errorf("Deployment %s: no memory limit", d.Name)
	}
	if c.LivenessProbe == nil || c.ReadinessProbe == nil {
		t.Errorf("Deployment %s: liveness and readiness probes are needed", d.Name)
	}
	if pod.HostNetwork || pod.HostPID || pod.HostIPC {
		t.Errorf("Deployment %s: shares the host's namespaces", d.Name)
	}
	ps := pod.SecurityContext
	if ps == nil {
		ps = &corev1.PodSecurityContext{}
	}
	cs := c.SecurityContext
	if cs == nil {
		t.Fatalf("Deployment %s: no container securityContext", d.Name)
	}
	if !isTrue(cs.RunAsNonRoot) && !isTrue(ps.RunAsNonRoot) {
		t.Errorf("Deployment %s: runAsNonRoot is not set", d.Name)
	}
	uid := cs.RunAsUser
	if uid == nil {
		uid = ps.RunAsUser
	}
	if uid == nil || *uid == 0 {
		t.Errorf("Deployment %s: runAsUser %v; want a non-root uid", d.Name, uid)
	}
	if isGateway(d) && (uid == nil || *uid != 65532) {
		t.Errorf("Deployment %s: runAsUser %v; want 65532, the image's USER", d.Name, uid)
	}
	if !isTrue(cs.ReadOnlyRootFilesystem) {
		t.Errorf("Deployment %s: readOnlyRootFilesystem is not true", d.Name)
	}
	if cs.AllowPrivilegeEscalation == nil || *cs.AllowPrivilegeEscalation {
		t.Errorf("Deployment %s: allowPrivilegeEscalation is not false", d.Name)
	}
	if isTrue(cs.Privileged) {
		t.Errorf("Deployment %s: privileged", d.Name)
	}
	if cs.Capabilities == nil || !slices.Equal(cs.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(cs.Capabilities.Add) != 0 {
		t.Errorf("Deployment %s: capabilities %+v; want drop ALL, add none", d.Name, cs.Capabilities)
	}
	seccomp := cs.SeccompProfile
	if seccomp == nil {
		seccomp = ps.SeccompProfile
	}
	if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("Deployment %s: seccompProfile %+v; want RuntimeDefault", d.Name, seccomp)
	}
}

// checkRedis checks the single Redis for trying it out: there exactly
// when wanted, its Service selecting it (not the gateway), and named by
// the state block's URL.
func checkRedis(t *testing.T, objs []manifest, state *stateBlock, w want) {
	t.Helper()
	var redis *appsv1.Deployment
	for _, d := range objectsOf[*appsv1.Deployment](objs) {
		if !isGateway(d) {
			redis = d
		}
	}
	if (redis != nil) != w.devRedis {
		t.Fatalf("the single Redis: in the set %v; want %v", redis != nil, w.devRedis)
	}
	if redis == nil {
		return
	}
	if *redis.Spec.Replicas != 1 || redis.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("Redis %s: one replica, recreated; got %d, %s", redis.Name, *redis.Spec.Replicas, redis.Spec.Strategy.Type)
	}
	c := &redis.Spec.Template.Spec.Containers[0]
	var pass *corev1.EnvVar
	for i := range c.Env {
		if c.Env[i].Name == "REDIS_PASSWORD" {
			pass = &c.Env[i]
		}
	}
	key := w.redisKey
	if key == "" {
		key = "redis-password"
	}
	if pass == nil || pass.ValueFrom == nil || pass.ValueFrom.SecretKeyRef == nil || pass.ValueFrom.SecretKeyRef.Name != w.redisSecret || pass.ValueFrom.SecretKeyRef.Key != key {
		t.Errorf("Redis %s: REDIS_PASSWORD %+v; want Secret %s key %s, as the gateway", redis.Name, pass, w.redisSecret, key)
	}
	checkRedisPassword(t, redis, c)
	if w.tls {
		checkRedisTLS(t, objs, redis, c, state)
	}
	var svc *corev1.Service
	for _, s := range objectsOf[*corev1.Service](objs) {
		if s.Name == state.url.Hostname() {
			svc = s
		}
	}
	if svc == nil {
		t.Fatalf("state url host %s: no such Service in the set", state.url.Hostname())
	}
	if !selects(t, svc.Spec.Selector, redis.Spec.Template.Labels) {
		t.Errorf("Service %s does not select Redis's pods", svc.Name)
	}
	if len(svc.Spec.Ports) != 1 || itoa(int(svc.Spec.Ports[0].Port)) != state.url.Port() || portOf(t, c, svc.Spec.Ports[0].TargetPort) != 6379 {
		t.Errorf("Service %s: ports %+v; the state url says port %s", svc.Name, svc.Spec.Ports, state.url.Port())
	}
}

// checkNetworkPolicies checks the NetworkPolicies: one around the
// gateway's pods, when wanted, letting in only its port and out only DNS,
// Redis (the single Redis's pods, when in the set) and rules with ports;
// one around the single Redis, letting in only the gateway on its port.
func checkNetworkPolicies(t *testing.T, objs []manifest, gw *appsv1.Deployment, port int, state *stateBlock, w want) {
	t.Helper()
	c := &gw.Spec.Template.Spec.Containers[0]
	gwLabels := labels.Set(gw.Spec.Template.Labels)
	var redis *appsv1.Deployment
	for _, d := range objectsOf[*appsv1.Deployment](objs) {
		if !isGateway(d) {
			redis = d
		}
	}
	var gwPolicies, redisPolicies []*networkingv1.NetworkPolicy
	for _, p := range objectsOf[*networkingv1.NetworkPolicy](objs) {
		switch {
		case selects(t, p.Spec.PodSelector.MatchLabels, gwLabels):
			gwPolicies = append(gwPolicies, p)
		case redis != nil && selects(t, p.Spec.PodSelector.MatchLabels, redis.Spec.Template.Labels):
			redisPolicies = append(redisPolicies, p)
		default:
			t.Errorf("NetworkPolicy %s selects neither the gateway's pods nor Redis's", p.Name)
		}
	}
	if !w.netpol {
		if len(gwPolicies)+len(redisPolicies) != 0 {
			t.Errorf("%d NetworkPolicies; want none", len(gwPolicies)+len(redisPolicies))
		}
		return
	}
	if len(gwPolicies) != 1 {
		t.Fatalf("%d NetworkPolicies select the gateway's pods; want 1", len(gwPolicies))
	}
	p := gwPolicies[0]
	// Egress is restricted only when asked: by default an upgrade must not
	// cut the gateway off its remote servers and identity providers.
	if !slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) || slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) != w.egress {
		t.Errorf("NetworkPolicy %s: policyTypes %v; want Ingress, and Egress %v", p.Name, p.Spec.PolicyTypes, w.egress)
	}
	if len(p.Spec.Ingress) == 0 {
		t.Errorf("NetworkPolicy %s: no ingress rule: nobody reaches the gateway", p.Name)
	}
	for _, r := range p.Spec.Ingress {
		if len(r.Ports) == 0 {
			t.Errorf("NetworkPolicy %s: an ingress rule for every port", p.Name)
		}
		for _, rp := range r.Ports {
			if rp.Port == nil || portOf(t, c, *rp.Port) != port || ptrOr(rp.Protocol) != corev1.ProtocolTCP {
				t.Errorf("NetworkPolicy %s: ingress on %v; want only the gateway's port %d/TCP", p.Name, rp.Port, port)
			}
		}
	}
	var dnsUDP, dnsTCP, toRedis bool
	for _, r := range p.Spec.Egress {
		if len(r.Ports) == 0 {
			t.Errorf("NetworkPolicy %s: an egress rule for every port", p.Name)
		}
		for _, rp := range r.Ports {
			if rp.Port == nil {
				t.Errorf("NetworkPolicy %s: an egress rule for every port", p.Name)
				continue
			}
			switch n := rp.Port.IntValue(); {
			case n == 53 && ptrOr(rp.Protocol) == corev1.ProtocolUDP:
				dnsUDP = true
			case n == 53 && ptrOr(rp.Protocol) == corev1.ProtocolTCP:
				dnsTCP = true
			case itoa(n) == state.url.Port() && redis == nil:
				toRedis = true
			case n == 6379 && redis != nil:
				for _, peer := range r.To {
					if peer.PodSelector != nil && selects(t, peer.PodSelector.MatchLabels, redis.Spec.Template.Labels) && peer.NamespaceSelector == nil {
						toRedis = true
					}
				}
			}
		}
	}
	if !w.egress && len(p.Spec.Egress) != 0 {
		t.Errorf("NetworkPolicy %s: egress rules %v without policyType Egress", p.Name, p.Spec.Egress)
	}
	if w.egress && (!dnsUDP || !dnsTCP || !toRedis) {
		t.Errorf("NetworkPolicy %s: egress to DNS over UDP %v and TCP %v, to Redis (port %s) %v; want all", p.Name, dnsUDP, dnsTCP, state.url.Port(), toRedis)
	}
	if redis == nil {
		return
	}
	if len(redisPolicies) != 1 {
		t.Fatalf("%d NetworkPolicies select Redis's pods; want 1", len(redisPolicies))
	}
	rp := redisPolicies[0]
	rc := &redis.Spec.Template.Spec.Containers[0]
	if !slices.Contains(rp.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) || !slices.Contains(rp.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) || len(rp.Spec.Egress) != 0 {
		t.Errorf("NetworkPolicy %s: policyTypes %v, egress %v; want Ingress and Egress, no egress", rp.Name, rp.Spec.PolicyTypes, rp.Spec.Egress)
	}
	for _, r := range rp.Spec.Ingress {
		if len(r.From) == 0 || len(r.Ports) == 0 {
			t.Errorf("NetworkPolicy %s: ingress from anyone or on every port", rp.Name)
		}
		for _, peer := range r.From {
			if peer.PodSelector == nil || peer.NamespaceSelector != nil || peer.IPBlock != nil || !selects(t, peer.PodSelector.MatchLabels, gwLabels) {
				t.Errorf("NetworkPolicy %s: ingress from %+v; want only the gateway's pods", rp.Name, peer)
			}
		}
		for _, pp := range r.Ports {
			if pp.Port == nil || portOf(t, rc, *pp.Port) != 6379 {
				t.Errorf("NetworkPolicy %s: ingress on %v; want Redis's port only", rp.Name, pp.Port)
			}
		}
	}
}

// checkRedisPassword runs the single Redis's command with a sh of this
// machine, a stand-in redis-server that records what it is given and
// /run/redis moved to a temporary directory: the password (one with the
// characters Redis's configuration quotes) reaches redis-server in a 0600
// configuration file on a memory volume, never in its arguments, which
// /proc/PID/cmdline shows every user, nor in its environment.
func checkRedisPassword(t *testing.T, redis *appsv1.Deployment, c *corev1.Container) {
	t.Helper()
	argv := append(slices.Clone(c.Command), c.Args...)
	for _, a := range argv {
		if strings.Contains(a, "$(REDIS_PASSWORD)") || a == "--requirepass" {
			t.Errorf("Redis %s: the password in redis-server's arguments: %q", redis.Name, argv)
		}
	}
	if len(argv) < 3 || argv[0] != "sh" || argv[1] != "-c" {
		t.Fatalf("Redis %s: command %q; want sh -c writing its configuration file", redis.Name, argv)
	}
	const run = "/run/redis"
	m, v := mountOf(t, c, &redis.Spec.Template.Spec, run+"/redis.conf")
	if m == nil || v.EmptyDir == nil || v.EmptyDir.Medium != corev1.StorageMediumMemory {
		t.Fatalf("Redis %s: %s is not on a memory emptyDir", redis.Name, run)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	stub := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + dir + "/argv\nenv > " + dir + "/environ\n"
	if err := os.WriteFile(filepath.Join(bin, "redis-server"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	const password = `p@ss "Zq8\w" $(x)`
	script := strings.ReplaceAll(argv[2], run, dir)
	cmd := exec.Command("sh", append([]string{"-c", script}, argv[3:]...)...)
	cmd.Env = []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "REDIS_PASSWORD=" + password}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("Redis %s: its command: %v\n%s", redis.Name, err, out)
	}
	gotArgv, err1 := os.ReadFile(filepath.Join(dir, "argv"))
	gotEnv, err2 := os.ReadFile(filepath.Join(dir, "environ"))
	if err := errors.Join(err1, err2); err != nil {
		t.Fatalf("Redis %s: redis-server was not started: %v", redis.Name, err)
	}
	if strings.Contains(string(gotArgv), "Zq8") || strings.Contains(string(gotEnv), "Zq8") {
		t.Errorf("Redis %s: the password reaches redis-server's arguments or environment:\n%s\n%s", redis.Name, gotArgv, gotEnv)
	}
	conf := filepath.Join(dir, "redis.conf")
	if first := strings.SplitN(string(gotArgv), "\n", 2)[0]; first != conf {
		t.Errorf("Redis %s: redis-server's first argument %q; want its configuration file", redis.Name, first)
	}
	fi, err := os.Stat(conf)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("Redis %s: the configuration file: %v, %v; want mode 0600", redis.Name, err, fi)
	}
	b, _ := os.ReadFile(conf)
	if want := `requirepass "p@ss \"Zq8\\w\" $(x)"` + "\n"; string(b) != want {
		t.Errorf("Redis %s: configuration file %q; want %q", redis.Name, b, want)
	}

	// A line break would end the requirepass line, and the rest be read
	// as another directive: the start fails, saying why, redis-server
	// never runs.
	for _, bad := range []string{"ab\nrename-command CONFIG \"\"", "ab\r\nport 1", "ab\r"} {
		os.Remove(filepath.Join(dir, "argv"))
		os.Remove(conf)
		cmd := exec.Command("sh", append([]string{"-c", script}, argv[3:]...)...)
		cmd.Env = []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "REDIS_PASSWORD=" + bad}
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "line break") {
			t.Errorf("Redis %s: a password with a line break %q: %v, %q; want a failure saying so", redis.Name, bad, err, out)
		}
		if _, err := os.Stat(filepath.Join(dir, "argv")); err == nil {
			t.Errorf("Redis %s: a password with a line break %q: redis-server started", redis.Name, bad)
		}
		if b, err := os.ReadFile(conf); err == nil {
			t.Errorf("Redis %s: a password with a line break %q: configuration file %q", redis.Name, bad, b)
		}
	}
}

// checkRedisTLS checks the single Redis over TLS: it listens on TLS only,
// with a certificate of a Secret in the set whose CA is the gateway's
// ca_file and which is valid for the state url's host.
func checkRedisTLS(t *testing.T, objs []manifest, redis *appsv1.Deployment, c *corev1.Container, state *stateBlock) {
	t.Helper()
	if flag(c.Args, "--port") != "0" || flag(c.Args, "--tls-port") != "6379" {
		t.Errorf("Redis %s: args %q; want --port 0 --tls-port 6379 (TLS only)", redis.Name, c.Args)
	}
	pod := &redis.Spec.Template.Spec
	files := map[string]string{}
	var secret string
	for _, f := range []string{"--tls-cert-file", "--tls-key-file"} {
		p := flag(c.Args, f)
		m, v := mountOf(t, c, pod, p)
		if m == nil || v.Secret == nil {
			t.Fatalf("Redis %s: %s %s is not on a Secret volume", redis.Name, f, p)
		}
		secret = v.Secret.SecretName
		files[f] = path.Base(p)
	}
	var s *corev1.Secret
	for _, o := range objectsOf[*corev1.Secret](objs) {
		if o.Name == secret {
			s = o
		}
	}
	if s == nil {
		t.Fatalf("Redis's TLS Secret %s: not in the set", secret)
	}
	// The gateway mounts the CA alone, from a ConfigMap: never Redis's
	// Secret, which holds its private key.
	gw := gateway(t, objs)
	for _, v := range gw.Spec.Template.Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == secret {
			t.Errorf("the gateway mounts Redis's Secret %s (volume %s), private key and all", secret, v.Name)
		}
	}
	caPath := state.files["ca_file"]
	m, v := mountOf(t, &gw.Spec.Template.Spec.Containers[0], &gw.Spec.Template.Spec, caPath)
	if caPath == "" || m == nil || v.ConfigMap == nil {
		t.Fatalf("the gateway's ca_file %q is not on a ConfigMap volume", caPath)
	}
	var caPEM string
	for _, cm := range objectsOf[*corev1.ConfigMap](objs) {
		if cm.Name == v.ConfigMap.Name {
			caPEM = cm.Data[path.Base(caPath)]
		}
	}
	if ca, _ := secretValue(s, "ca.crt"); caPEM == "" || caPEM != ca {
		t.Errorf("the gateway's ca_file %q (ConfigMap %s) is not the CA of Redis's Secret %s", caPath, v.ConfigMap.Name, secret)
	}
	certPEM, _ := secretValue(s, files["--tls-cert-file"])
	keyPEM, _ := secretValue(s, files["--tls-key-file"])
	if _, err := tls.X509KeyPair([]byte(certPEM), []byte(keyPEM)); err != nil {
		t.Fatalf("Secret %s: the certificate and its key: %v", secret, err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(caPEM)) {
		t.Fatalf("Secret %s: no CA certificate", secret)
	}
	blk, _ := pem.Decode([]byte(certPEM))
	if blk == nil {
		t.Fatalf("Secret %s: no certificate", secret)
	}
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: state.url.Hostname()}); err != nil {
		t.Errorf("Secret %s: the certificate does not verify for %s with the gateway's CA: %v", secret, state.url.Hostname(), err)
	}
}

// stateBlock is the configuration's state block, as the checks need it.
type stateBlock struct {
	url   *url.URL
	files map[string]string // ca_file, cert_file, key_file → path
}

// checkStateBlock finds the state block in the configuration's text (with
// HCL's own parser, whatever the loader supports) and checks it: backend
// "redis", a redis:// or rediss:// URL whose password is
// MCPHOST_REDIS_PASSWORD from the environment, never written in the
// ConfigMap, and a key prefix.
func checkStateBlock(t *testing.T, filename, src string, env map[string]string) *stateBlock {
	t.Helper()
	f, diags := hclsyntax.ParseConfig([]byte(src), filename, hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("%s: %v", filename, diags)
	}
	var blocks []*hclsyntax.Block
	for _, b := range f.Body.(*hclsyntax.Body).Blocks {
		if b.Type == "state" {
			blocks = append(blocks, b)
		}
	}
	if len(blocks) != 1 {
		t.Fatalf("%s: %d state blocks; want 1 (replicas share their state)", filename, len(blocks))
	}
	ctx := &hcl.EvalContext{Functions: map[string]function.Function{"env": function.New(&function.Spec{
		Params: []function.Parameter{{Name: "name", Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			return cty.StringVal("env." + args[0].AsString()), nil
		},
	})}}
	attrs := map[string]string{}
	for name, a := range blocks[0].Body.Attributes {
		v, diags := a.Expr.Value(ctx)
		if diags.HasErrors() || v.Type() != cty.String {
			t.Errorf("%s: state %s: %v (want a string)", filename, name, diags)
			continue
		}
		attrs[name] = v.AsString()
	}
	if attrs["backend"] != "redis" {
		t.Errorf("%s: state backend = %q; want \"redis\"", filename, attrs["backend"])
	}
	if attrs["key_prefix"] == "" {
		t.Errorf("%s: state has no key_prefix", filename)
	}
	u, err := url.Parse(attrs["url"])
	if err != nil {
		t.Fatalf("%s: state url: %v", filename, err)
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" || u.Hostname() == "" || u.Port() == "" || u.Path != "/0" {
		t.Errorf("%s: state url %s: want redis[s]://HOST:PORT/0", filename, u.Redacted())
	}
	if p, _ := u.User.Password(); p != "env."+envRedisPass {
		t.Errorf("%s: state url: the password is not ${env(%q)}", filename, envRedisPass)
	}
	if _, ok := env[envRedisPass]; !ok {
		t.Errorf("%s: the pod has no %s", filename, envRedisPass)
	}
	s := &stateBlock{url: u, files: map[string]string{}}
	for _, k := range []string{"ca_file", "cert_file", "key_file"} {
		if p, ok := attrs[k]; ok {
			s.files[k] = p
		}
	}
	return s
}

// loadConfig loads the configuration as the pod's mcphost would: the file
// at its path (--config), in the pod's environment.
func loadConfig(t *testing.T, filename, src string, env map[string]string) *config.Config {
	t.Helper()
	env["MCPHOST_MANAGED_CONFIG"] = filename + ".no-managed-file-here"
	cfg, diags := config.Load(&config.LoadOptions{
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		WorkDir:   "/",
		Files:     []string{filename},
		Overlay:   map[string][]byte{filename: []byte(src)},
	})
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			t.Errorf("%s: %s: %s", filename, d.Summary, d.Detail)
		} else {
			t.Logf("%s: warning: %s: %s", filename, d.Summary, d.Detail)
		}
	}
	return cfg
}

// podEnvironment is the environment mcphost runs with in the pod: the
// image's ENV, then the container's env (Secrets and the Downward API
// stood in for).
func podEnvironment(t *testing.T, c *corev1.Container) map[string]string {
	t.Helper()
	im := parseDockerfile(t)
	env := im.env(im.final())
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.SecretKeyRef != nil:
			env[e.Name] = "secret-" + e.ValueFrom.SecretKeyRef.Key
		default:
			env[e.Name] = "from-the-downward-api"
		}
	}
	return env
}

// mountOf returns the volume mount (and its volume) that holds path p.
func mountOf(t *testing.T, c *corev1.Container, pod *corev1.PodSpec, p string) (*corev1.VolumeMount, *corev1.Volume) {
	t.Helper()
	var best *corev1.VolumeMount
	for i, m := range c.VolumeMounts {
		if p == m.MountPath || strings.HasPrefix(p, strings.TrimSuffix(m.MountPath, "/")+"/") {
			if best == nil || len(m.MountPath) > len(best.MountPath) {
				best = &c.VolumeMounts[i]
			}
		}
	}
	if best == nil {
		return nil, nil
	}
	for i, v := range pod.Volumes {
		if v.Name == best.Name {
			return best, &pod.Volumes[i]
		}
	}
	t.Errorf("volumeMount %s: no volume of that name", best.Name)
	return nil, nil
}

// containerPort returns the number of the container's port of that name.
func containerPort(t *testing.T, c *corev1.Container, name string) int {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == name {
			return int(p.ContainerPort)
		}
	}
	t.Fatalf("container %s: no port %q", c.Name, name)
	return 0
}

// portOf resolves a port (a number, or a name of the container's).
func portOf(t *testing.T, c *corev1.Container, p intstr.IntOrString) int {
	t.Helper()
	if p.Type == intstr.Int {
		return p.IntValue()
	}
	return containerPort(t, c, p.StrVal)
}

// selects reports whether a non-empty selector selects pods with labels l.
func selects(t *testing.T, sel map[string]string, l labels.Set) bool {
	t.Helper()
	return len(sel) > 0 && labels.SelectorFromSet(sel).Matches(l)
}

// flag returns the value after name in args ("" if absent).
func flag(args []string, name string) string {
	if i := slices.Index(args, name); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// secretValue returns a Secret's value for key, from data or stringData.
func secretValue(s *corev1.Secret, key string) (string, bool) {
	if v, ok := s.StringData[key]; ok {
		return v, true
	}
	if v, ok := s.Data[key]; ok {
		return string(v), true
	}
	return "", false
}

func isTrue(b *bool) bool { return b != nil && *b }

func itoa(n int) string { return strconv.Itoa(n) }

func ptrOr[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
