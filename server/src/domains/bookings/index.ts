/** The bookings domain's only door: what other domains and the app composition use. */
export { default as bookingsPlugin } from './plugin.ts';
export { default as adminReservableRoutes } from './routes/admin-reservables.ts';
export { default as bookingRoutes } from './routes/bookings.ts';
export { default as planningRoutes } from './routes/planning.ts';
export { default as reservableRoutes } from './routes/reservables.ts';
