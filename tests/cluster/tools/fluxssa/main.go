// fluxssa applies Kubernetes manifests and detects drift the way Flux does, with the library Flux
// itself uses (github.com/fluxcd/pkg/ssa), so that a kuttl suite can prove what Flux would see
// without running Flux's controllers (kuttl/tests/gitops-flux).
//
//	fluxssa apply FILE   kustomize-controller's sync of one Kustomization: its normalisation, owner
//	                     labels, apply options (cleanup of kubectl's managers and last-applied
//	                     annotation, exclusion selectors), --concurrent-ssa 4, field manager
//	                     kustomize-controller, ResourceManager.ApplyAllStaged. Its server-side
//	                     dry-run and comparison is Flux's in-cluster drift detection: objects that
//	                     have not drifted are not applied ("unchanged"). Prints the change set, one
//	                     "Kind/namespace/name action" line per object.
//	fluxssa diff FILE    Flux's drift report: `flux diff kustomization`'s jsondiff.UnstructuredList
//	                     and ResourceManager.Diff for every object. Prints one
//	                     "Kind/namespace/name <diff type> <rm.Diff action>" line per object and, for
//	                     one that drifted, each JSON patch operation (op and path). Exit 1 when any
//	                     object would be created or changed.
//
// FILE is multi-document YAML ("-" for standard input); objects must name their namespace.
// Exit 2 on any error. The cluster is the one of $KUBECONFIG (client-go's loading rules).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/jsondiff"
	"github.com/fluxcd/pkg/ssa/normalize"
	"github.com/fluxcd/pkg/ssa/utils"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// kustomize-controller's field manager (its --controller-name default) and the group of its
	// owner labels and selector annotations (kustomize.toolkit.fluxcd.io/...).
	fieldManager = "kustomize-controller"
	fluxGroup    = "kustomize.toolkit.fluxcd.io"
	// kustomize-controller's --concurrent-ssa default.
	concurrentSSA = 4
	// The Kustomization whose owner labels the objects get (kustomize-controller sets
	// <group>/name and <group>/namespace on every object it applies).
	kustomizationName      = "restarter-gitops"
	kustomizationNamespace = "flux-system"
)

func main() {
	if len(os.Args) != 3 || (os.Args[1] != "apply" && os.Args[1] != "diff") {
		fmt.Fprintln(os.Stderr, "usage: fluxssa apply|diff FILE")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	code, err := run(ctx, os.Args[1], os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "fluxssa:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

func run(ctx context.Context, command, file string) (int, error) {
	objects, err := readObjects(file)
	if err != nil {
		return 0, err
	}
	config, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return 0, fmt.Errorf("kubeconfig: %w", err)
	}
	kubeClient, err := client.New(config, client.Options{})
	if err != nil {
		return 0, fmt.Errorf("client: %w", err)
	}
	poller := polling.NewStatusPoller(kubeClient, kubeClient.RESTMapper(), polling.Options{})
	manager := ssa.NewResourceManager(kubeClient, poller, ssa.Owner{Field: fieldManager, Group: fluxGroup})
	manager.SetOwnerLabels(objects, kustomizationName, kustomizationNamespace)
	manager.SetConcurrency(concurrentSSA)
	if command == "apply" {
		return 0, apply(ctx, manager, objects)
	}
	return diff(ctx, kubeClient, manager, objects)
}

func readObjects(file string) ([]*unstructured.Unstructured, error) {
	var in io.Reader = os.Stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		in = f
	}
	objects, err := utils.ReadObjects(in)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	if len(objects) == 0 {
		return nil, fmt.Errorf("%s holds no Kubernetes object", file)
	}
	return objects, nil
}

// apply is kustomize-controller's apply step (KustomizationReconciler.apply) for a Kustomization
// without force, common metadata or disallowed managers.
func apply(ctx context.Context, manager *ssa.ResourceManager, objects []*unstructured.Unstructured) error {
	if err := normalize.UnstructuredList(objects); err != nil {
		return err
	}
	opts := ssa.DefaultApplyOptions()
	opts.ExclusionSelector = map[string]string{
		fluxGroup + "/reconcile": "disabled",
		fluxGroup + "/ssa":       "Ignore",
	}
	opts.IfNotPresentSelector = map[string]string{fluxGroup + "/ssa": "IfNotPresent"}
	opts.ForceSelector = map[string]string{fluxGroup + "/force": "enabled"}
	opts.Cleanup = ssa.ApplyCleanupOptions{
		Annotations: []string{corev1.LastAppliedConfigAnnotation, fluxGroup + "/checksum", "fluxcd.io/sync-checksum"},
		Labels:      []string{"fluxcd.io/sync-gc-mark"},
		FieldManagers: []ssa.FieldManager{
			{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationApply},
			{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationUpdate},
			{Name: "before-first-apply", OperationType: metav1.ManagedFieldsOperationUpdate},
			{Name: fieldManager, OperationType: metav1.ManagedFieldsOperationUpdate},
		},
		Exclusions: map[string]string{fluxGroup + "/ssa": "Merge"},
	}
	changeSet, err := manager.ApplyAllStaged(ctx, objects, opts)
	if changeSet != nil {
		for _, entry := range changeSet.Entries {
			fmt.Println(entry.String())
		}
	}
	return err
}

// diff reports drift with both of Flux's detectors; exit code 1 when either finds any.
func diff(ctx context.Context, kubeClient client.Client, manager *ssa.ResourceManager,
	objects []*unstructured.Unstructured) (int, error) {
	exclusions := map[string]string{fluxGroup + "/reconcile": "disabled"}
	diffs, err := jsondiff.UnstructuredList(ctx, kubeClient, objects,
		jsondiff.FieldOwner(fieldManager), jsondiff.ExclusionSelector(exclusions),
		jsondiff.MaskSecrets(true), jsondiff.Rationalize(true))
	if err != nil {
		return 0, err
	}
	drifted := false
	for i, d := range diffs {
		entry, _, _, err := manager.Diff(ctx, objects[i], ssa.DiffOptions{Exclusions: exclusions})
		if err != nil {
			return 0, err
		}
		fmt.Printf("%s %s %s\n", utils.FmtUnstructured(objects[i]), d.Type, entry.Action)
		for _, op := range d.Patch {
			fmt.Printf("  %s %s\n", op.Type, op.Path)
		}
		if d.Type == jsondiff.DiffTypeCreate || d.Type == jsondiff.DiffTypeUpdate || entry.Action != ssa.UnchangedAction {
			drifted = true
		}
	}
	if drifted {
		return 1, nil
	}
	return 0, nil
}
