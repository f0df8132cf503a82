// Package deploy holds only tests: they build every kustomize overlay in k8s/, decode each
// object strictly into its Kubernetes type (or validate it against its CRD schema), check the
// invariants the system relies on, and check the Dockerfile and docs/DEPLOY.md against the
// repository. The Kubernetes dependencies stay test-only.
package deploy
