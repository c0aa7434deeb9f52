pub mod cert_manager_io;
