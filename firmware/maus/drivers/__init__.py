# Device drivers: each is handed its bus and pins.
