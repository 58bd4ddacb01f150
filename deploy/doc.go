// Package deploy holds how mcphost is deployed: the container image (the
// Dockerfile at the repository's root), plain Kubernetes manifests (k8s/)
// and a Helm chart (helm/mcphost/). It has no code, only tests, which need
// neither a cluster, nor a container builder, nor the network:
//
//   - the chart is rendered with Helm's own packages for several sets of
//     values, and every rendered object and every plain manifest is decoded
//     strictly into its Kubernetes API type (a misspelled field fails), then
//     checked for what a gateway of several replicas needs (probes, security
//     context, resources, Secrets, selectors, the state block…);
//   - the gateway configuration in each ConfigMap is loaded with mcphost's
//     own loader (host/config), in the environment the pod gives it;
//   - the Dockerfile is parsed and linted with BuildKit's parser.
//
// It is a module of its own so that the main module does not depend on Helm
// or the Kubernetes API.
package deploy
