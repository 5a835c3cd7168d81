// Package charts holds the offline tests of ration's deployment artefacts:
// the Helm chart in ration/ (rendered with the Helm SDK, every manifest
// decoded strictly into its k8s.io/api type), the values schema, and the
// Dockerfile at the repository root. It is its own module so that Helm and
// Kubernetes dependencies stay out of the library's go.mod.
package charts
