//! Webhooks on a core kind, with every optional key.

// +rsop:webhook:path=/mutate--v1-pod,mutating=true,failurePolicy=ignore,matchPolicy=Equivalent,sideEffects=NoneOnDryRun,timeoutSeconds=5,groups="",resources=pods,verbs=create,versions=v1,name=mpod-v1.kb.io,admissionReviewVersions=v1,reinvocationPolicy=IfNeeded
// +rsop:webhook:path=/validate--v1-pod,mutating=false,failurePolicy=fail,sideEffects=None,groups=core,resources=pods;pods/ephemeralcontainers,verbs=create;update;delete,versions=v1,name=apod-v1.kb.io,admissionReviewVersions=v1;v1beta1
