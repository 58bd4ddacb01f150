package deploy

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

const (
	chartDir     = "helm/mcphost"
	manifestsDir = "k8s"
)

// manifest is one object of a YAML stream, decoded into its API type.
type manifest struct {
	source string // file#document
	typ    string // apiVersion/kind, e.g. "apps/v1/Deployment"
	obj    metav1.Object
}

// apiTypes are the kinds the deployment is made of, by apiVersion/kind. Any
// other is an error: a misspelled kind or apiVersion included.
var apiTypes = map[string]func() metav1.Object{
	"v1/ConfigMap":                       func() metav1.Object { return new(corev1.ConfigMap) },
	"v1/Secret":                          func() metav1.Object { return new(corev1.Secret) },
	"v1/Service":                         func() metav1.Object { return new(corev1.Service) },
	"v1/ServiceAccount":                  func() metav1.Object { return new(corev1.ServiceAccount) },
	"apps/v1/Deployment":                 func() metav1.Object { return new(appsv1.Deployment) },
	"policy/v1/PodDisruptionBudget":      func() metav1.Object { return new(policyv1.PodDisruptionBudget) },
	"networking.k8s.io/v1/NetworkPolicy": func() metav1.Object { return new(networkingv1.NetworkPolicy) },
}

// splitDocuments splits a YAML stream at its "---" lines, dropping the
// documents that hold only comments and blank lines.
func splitDocuments(stream string) []string {
	var docs, cur []string
	flush := func() {
		doc := strings.Join(cur, "\n")
		cur = nil
		for l := range strings.SplitSeq(doc, "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				docs = append(docs, doc)
				return
			}
		}
	}
	for line := range strings.SplitSeq(stream, "\n") {
		if strings.TrimRight(line, " \t") == "---" {
			flush()
			continue
		}
		cur = append(cur, line)
	}
	flush()
	return docs
}

// decode decodes every document of a YAML stream strictly into its API
// type: an unknown or duplicate field (names are case-sensitive), a value of
// the wrong type, or a kind not in apiTypes is an error.
func decode(source, stream string) ([]manifest, error) {
	var out []manifest
	for i, doc := range splitDocuments(stream) {
		src := fmt.Sprintf("%s#%d", source, i)
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			return nil, fmt.Errorf("%s: %w", src, err)
		}
		typ := tm.APIVersion + "/" + tm.Kind
		newObj, ok := apiTypes[typ]
		if !ok {
			return nil, fmt.Errorf("%s: unexpected apiVersion/kind %q", src, typ)
		}
		// As the API server decodes with strict field validation (kubectl's
		// default): field names are case-sensitive, unknown and duplicate
		// fields are errors, and so are duplicate keys in the YAML.
		j, err := yaml.YAMLToJSONStrict([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("%s (%s): %w", src, typ, err)
		}
		obj := newObj()
		strict, err := kjson.UnmarshalStrict(j, obj)
		if err = errors.Join(append(strict, err)...); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", src, typ, err)
		}
		out = append(out, manifest{source: src, typ: typ, obj: obj})
	}
	return out, nil
}

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	c, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// render renders the chart as `helm install RELEASE --namespace mcp -f
// values` would, without a cluster (lookup finds nothing), in strict mode (a
// value the templates use and the values lack is an error). Values are
// checked against values.schema.json first.
func render(c *chart.Chart, release, values string) (map[string]string, error) {
	vals, err := chartutil.ReadValues([]byte(values))
	if err != nil {
		return nil, err
	}
	rv, err := chartutil.ToRenderValues(c, vals, chartutil.ReleaseOptions{Name: release, Namespace: "mcp", Revision: 1, IsInstall: true}, nil)
	if err != nil {
		return nil, err
	}
	return engine.Engine{Strict: true}.Render(c, rv)
}

// renderObjects renders the chart and decodes its objects; it also returns
// NOTES.txt.
func renderObjects(t *testing.T, c *chart.Chart, release, values string) ([]manifest, string) {
	t.Helper()
	out, err := render(c, release, values)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	var objs []manifest
	var notes string
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range out {
			if !yield(k) {
				return
			}
		}
	}) {
		switch filepath.Ext(name) {
		case ".yaml":
			m, err := decode(name, out[name])
			if err != nil {
				t.Fatal(err)
			}
			objs = append(objs, m...)
		case ".txt":
			notes = out[name]
		}
	}
	return objs, notes
}

// The value sets the chart is checked with. Only redis.host and a Redis
// password are required (see TestChartRefuses).
func TestChart(t *testing.T) {
	t.Parallel()
	c := loadChart(t)
	required := "redis:\n  host: redis-master.redis.svc\n  password: s3cret\n"
	tests := []struct {
		name, release, values string
		want                  want
	}{{
		name:    "defaults",
		release: "mcphost",
		values:  required,
		want:    want{replicas: 3, secret: "mcphost", secretInSet: true, realKeys: true, redisSecret: "mcphost", pdb: true, tls: true, helm: true, netpol: true},
	}, {
		name:    "redis without TLS, when asked",
		release: "mcphost",
		values:  required + "  tls:\n    enabled: false\n",
		want:    want{replicas: 3, secret: "mcphost", secretInSet: true, realKeys: true, redisSecret: "mcphost", pdb: true, helm: true, netpol: true},
	}, {
		name:    "replicas 5 and an existing Secret",
		release: "gw",
		values: `
replicaCount: 5
existingSecret: mcphost-keys
redis:
  host: redis.example.internal
podAnnotations:
  prometheus.io/scrape: "true"
`,
		want: want{replicas: 5, secret: "mcphost-keys", redisSecret: "mcphost-keys", pdb: true, tls: true, helm: true, netpol: true},
	}, {
		name:    "redis over TLS with a client certificate, its password in its own Secret",
		release: "mcphost",
		values: `
sessionKeys:
  - "3q2+7wABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGho="
  - "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
redis:
  host: redis.example.internal
  port: 6380
  existingSecret: redis
  existingSecretPasswordKey: password
  tls:
    enabled: true
    secretName: redis-tls
    caKey: ca.crt
    certKey: tls.crt
    keyKey: tls.key
`,
		want: want{replicas: 3, secret: "mcphost", secretInSet: true, realKeys: true, sessionKeys: 2, redisSecret: "redis", redisKey: "password", pdb: true, tls: true, tlsFiles: 3, helm: true, netpol: true},
	}, {
		name:    "no NetworkPolicy",
		release: "mcphost",
		values:  required + "networkPolicy:\n  enabled: false\n",
		want:    want{replicas: 3, secret: "mcphost", secretInSet: true, realKeys: true, redisSecret: "mcphost", pdb: true, tls: true, helm: true},
	}, {
		name:    "NetworkPolicy peers and egress: an ingress controller, a Redis address, an upstream",
		release: "mcphost",
		values: required + `networkPolicy:
  ingressFrom:
    - namespaceSelector:
        matchLabels:
          kubernetes.io/metadata.name: ingress-nginx
  egress:
    enabled: true
    redisTo:
      - ipBlock:
          cidr: 10.20.0.5/32
    rules:
      - to:
          - ipBlock:
              cidr: 203.0.113.0/24
        ports:
          - port: 443
            protocol: TCP
`,
		want: want{replicas: 3, secret: "mcphost", secretInSet: true, realKeys: true, redisSecret: "mcphost", pdb: true, tls: true, helm: true, netpol: true, egress: true},
	}, {
		name:    "no PodDisruptionBudget",
		release: "mcphost",
		values:  required + "pdb:\n  enabled: false\n",
		want:    want{replicas: 3, secret: "mcphost", secretInSet: true, realKeys: true, redisSecret: "mcphost", tls: true, helm: true, netpol: true},
	}, {
		name:    "minAvailable 2, another release name",
		release: "edge",
		values:  required + "pdb:\n  minAvailable: 2\n",
		want:    want{replicas: 3, secret: "edge-mcphost", secretInSet: true, realKeys: true, redisSecret: "edge-mcphost", pdb: true, tls: true, helm: true, netpol: true},
	}, {
		name:    "the single Redis for trying it out",
		release: "mcphost",
		values:  "redis:\n  dev:\n    enabled: true\nnetworkPolicy:\n  egress:\n    enabled: true\n",
		want:    want{replicas: 3, secret: "mcphost", secretInSet: true, realKeys: true, redisSecret: "mcphost", pdb: true, devRedis: true, tls: true, tlsFiles: 1, helm: true, netpol: true, egress: true},
	}, {
		name:    "the single Redis without TLS",
		release: "mcphost",
		values:  "redis:\n  dev:\n    enabled: true\n  tls:\n    enabled: false\n",
		want:    want{replicas: 3, secret: "mcphost", secretInSet: true, realKeys: true, redisSecret: "mcphost", pdb: true, devRedis: true, helm: true, netpol: true},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			objs, notes := renderObjects(t, c, tt.release, tt.values)
			checkSet(t, objs, tt.want)
			if !strings.Contains(notes, "/mcp") || strings.Contains(notes, "MCPHOST_REDIS_PASSWORD") {
				t.Errorf("NOTES.txt:\n%s", notes)
			}
			if tt.want.devRedis != strings.Contains(notes, "NOT HA") && tt.want.devRedis != strings.Contains(notes, "not highly available") {
				t.Errorf("NOTES.txt: the warning about redis.dev is missing or misplaced:\n%s", notes)
			}
			// TLS became the default: an upgrade with a plain-text Redis
			// of one's own is told how to keep it.
			if tt.want.tls && !tt.want.devRedis != strings.Contains(notes, "redis.tls.enabled=false") {
				t.Errorf("NOTES.txt: the warning about TLS by default is missing or misplaced:\n%s", notes)
			}
		})
	}
}

// TestChartRefuses: values that would deploy a gateway that cannot work
// fail at render time, with what to do.
func TestChartRefuses(t *testing.T) {
	t.Parallel()
	c := loadChart(t)
	tests := []struct{ name, values, want string }{
		{"no redis.host", "", "redis.host is required"},
		{"no Redis password", "redis:\n  host: r\n", "redis.password is required"},
		{"a misspelled value", "redis:\n  host: r\n  password: p\nreplicas: 3\n", "additional properties 'replicas' not allowed"},
		{"a value of the wrong type", "redis:\n  host: r\n  password: p\nreplicaCount: three\n", "replicaCount"},
		{"a serve token under 16 characters", "redis:\n  host: r\n  password: p\nserveToken: short-token\n", "serveToken: at least 16"},
		{"a serve token with a space", "redis:\n  host: r\n  password: p\nserveToken: \"0123456789 abcdef\"\n", "serveToken: at least 16"},
		{"a session key that is not 32 bytes in base64", "redis:\n  host: r\n  password: p\nsessionKeys: [c2hvcnQ=]\n", "sessionKeys"},
		{"a state block in config", "redis:\n  host: r\n  password: p\nconfig: |\n  state {\n    backend = \"redis\"\n  }\n", "do not write a state block"},
		{"TLS files without their Secret", "redis:\n  host: r\n  password: p\n  tls:\n    enabled: true\n    caKey: ca.crt\n", "redis.tls.secretName is required"},
		{"TLS files for the single Redis", "redis:\n  dev:\n    enabled: true\n  tls:\n    secretName: s\n", "makes its own certificate"},
		{"a probe on another path", "redis:\n  host: r\n  password: p\nlivenessProbe:\n  tcpSocket:\n    port: http\n", "livenessProbe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := render(c, "mcphost", tt.values)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("render: %v; want an error with %q", err, tt.want)
			}
		})
	}
	// A serve token of 16 characters is the shortest mcphost serve takes.
	out, err := render(c, "mcphost", "redis:\n  host: r\n  password: p\nserveToken: 0123456789abcdef\n")
	if err != nil {
		t.Fatalf("render with a 16-character serveToken: %v", err)
	}
	if secret := out["mcphost/templates/secret.yaml"]; !strings.Contains(secret, base64.StdEncoding.EncodeToString([]byte("0123456789abcdef"))) {
		t.Errorf("the Secret does not hold the serveToken set:\n%s", secret)
	}
}

// TestChartConfigChangeRolls: a change of the configuration changes the pod
// template (checksum/config), so that Kubernetes rolls the replicas.
func TestChartConfigChangeRolls(t *testing.T) {
	t.Parallel()
	c := loadChart(t)
	base := "redis:\n  host: r\n  password: p\nexistingSecret: s\n"
	annotation := func(values string) string {
		objs, _ := renderObjects(t, c, "mcphost", values)
		return gateway(t, objs).Spec.Template.Annotations["checksum/config"]
	}
	a := annotation(base)
	b := annotation(base + "config: |\n  server \"other\" {\n    command = \"/usr/local/bin/mcphost-demo\"\n  }\n")
	if a == "" || a == b {
		t.Errorf("checksum/config: %q, then %q after a config change; want a checksum that changes", a, b)
	}
	if again := annotation(base); again != a {
		t.Errorf("checksum/config: %q, then %q for the same values; want it stable", a, again)
	}
}

// TestPlainManifests checks deploy/k8s: every file decodes strictly, and the
// set (with the Secret and the single Redis) is what a gateway of three
// replicas needs.
func TestPlainManifests(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(manifestsDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var objs []manifest
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := decode(f, string(b))
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, m...)
	}
	checkSet(t, objs, want{replicas: 3, secret: "mcphost", secretInSet: true, redisSecret: "mcphost", pdb: true, devRedis: true})
}

// TestKustomization: kustomization.yaml lists every manifest but the Secret
// (made by the operator) and the single Redis (for trying it out), and each
// exists.
func TestKustomization(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(manifestsDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Resources  []string `json:"resources"`
		Images     []struct {
			Name    string `json:"name"`
			NewName string `json:"newName"`
			NewTag  string `json:"newTag"`
		} `json:"images"`
	}
	if err := yaml.UnmarshalStrict(b, &k); err != nil {
		t.Fatal(err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		t.Errorf("kustomization.yaml: %s/%s", k.APIVersion, k.Kind)
	}
	files, _ := filepath.Glob(filepath.Join(manifestsDir, "*.yaml"))
	var want []string
	for _, f := range files {
		switch f := filepath.Base(f); f {
		case "kustomization.yaml", "secret.yaml", "redis-dev.yaml":
		default:
			want = append(want, f)
		}
	}
	got := slices.Sorted(slices.Values(k.Resources))
	if !slices.Equal(got, want) {
		t.Errorf("kustomization.yaml resources: %v; want %v", got, want)
	}
	for _, im := range k.Images {
		if im.NewTag == "" || im.NewTag == "latest" {
			t.Errorf("kustomization.yaml: image %s: tag %q", im.Name, im.NewTag)
		}
	}
}

// TestStrictDecoding: the check can fail. A misspelled field, a value of
// the wrong type, a duplicate field or an unknown kind in a rendered
// document is an error.
func TestStrictDecoding(t *testing.T) {
	t.Parallel()
	out, err := render(loadChart(t), "mcphost", "redis:\n  host: r\n  password: p\n")
	if err != nil {
		t.Fatal(err)
	}
	dep := out["mcphost/templates/deployment.yaml"]
	if _, err := decode("deployment.yaml", dep); err != nil {
		t.Fatalf("unmodified: %v", err)
	}
	tests := []struct{ name, old, new, want string }{
		{"misspelled field", "readinessProbe:", "readinesProbe:", `unknown field "spec.template.spec.containers[0].readinesProbe"`},
		{"field of another case", "readOnlyRootFilesystem:", "readOnlyRootFileSystem:", `unknown field "spec.template.spec.containers[0].securityContext.readOnlyRootFileSystem"`},
		{"wrong type", "replicas: 3", "replicas: three", "replicas"},
		{"duplicate field", "replicas: 3", "replicas: 3\n  replicas: 4", `key "replicas" already set`},
		{"unknown kind", "kind: Deployment", "kind: Deploymnet", "unexpected apiVersion/kind"},
		{"wrong apiVersion", "apiVersion: apps/v1", "apiVersion: extensions/v1beta1", "unexpected apiVersion/kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if !strings.Contains(dep, tt.old) {
				t.Fatalf("the rendered Deployment has no %q", tt.old)
			}
			_, err := decode("deployment.yaml", strings.Replace(dep, tt.old, tt.new, 1))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("decode: %v; want an error with %q", err, tt.want)
			}
		})
	}
}

// TestChartKubeVersion: the chart says which Kubernetes it needs (the
// preStop sleep action is on by default from 1.30), and that includes current ones.
func TestChartKubeVersion(t *testing.T) {
	t.Parallel()
	c := loadChart(t)
	for v, ok := range map[string]bool{"v1.29.4": false, "v1.30.0": true, "v1.33.1": true} {
		if got := chartutil.IsCompatibleRange(c.Metadata.KubeVersion, v); got != ok {
			t.Errorf("kubeVersion %q accepts %s: %v; want %v", c.Metadata.KubeVersion, v, got, ok)
		}
	}
}
