// Package assess reads the live objects of a deployed revision: whether they
// are ready (kstatus), and whether they drifted from the revision, told by
// field ownership (package ssa), which it repairs by applying the revision's
// objects again as the resource's account. What it found of each object
// (Seen) is kept with the decoded revision, so that an object unchanged since
// is neither compared nor converted again.
//
// It must never import the controller (package reconcile) or Helm's SDK.
package assess
