// +rsop:rbac:groups=core,resources=pods,verbs=get;list;watch
// +rsop:rbac:groups=core,resources=services,verbs=get;list;watch
// +rsop:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;update;patch;delete
// +rsop:rbac:groups=webapp.example.com,resources=guestbooks/status,verbs=get;update;patch
// +rsop:rbac:groups=webapp.example.com,resources=guestbooks/finalizers,verbs=update
// +rsop:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update,namespace=kube-system
// +rsop:rbac:urls=/metrics,verbs=get
/// `// +rsop:rbac:groups=ignored,resources=doc-comments,verbs=get` in a doc comment is not a marker.
pub fn reconcile() {}
